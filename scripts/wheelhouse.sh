#!/usr/bin/env bash
# Fill .cache/wheels with every wheel the extras need (online, once), for the offline per-extra
# venvs of tests/test_extras_offline.py and benchmarks/extras_venvs.py (which build UCMA's own
# wheel from the checkout each time, so it is not kept here).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
python -m pip wheel --quiet -w .cache/wheels ".[local,langchain,agents,langgraph,llamaindex]"
rm -f .cache/wheels/ucma-*.whl
