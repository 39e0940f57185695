#!/usr/bin/env bash
# Set up from scratch and run the two-session demo offline (embedded Chroma, MiniLM on the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh local
. .venv/bin/activate
python examples/two_sessions.py --fresh-process
