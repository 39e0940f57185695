#!/usr/bin/env bash
# Set up from scratch and run everything offline: lint, format check, mypy strict, then every test
# (docstring examples, docs examples, slow suites, executed notebooks and the docs site build included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "all,dev"
# the wheels of tests/test_extras_offline.py (each extra alone in a venv built offline)
bash scripts/wheelhouse.sh
. .venv/bin/activate
ruff check ucma_core ucma_langchain ucma_llamaindex tests benchmarks examples notebooks
mypy
python -m pytest
