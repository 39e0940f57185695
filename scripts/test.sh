#!/usr/bin/env bash
# Set up from scratch and run the whole test suite offline, the slow tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "all,dev"
. .venv/bin/activate
ruff check ucma_core tests benchmarks examples
python -m pytest
