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
# the frameworks' own tests for the classes UCMA replaces (tests/upstream): the installed versions'
# sdists, fetched from the package index now, so the test run itself stays offline
python -m tests.upstream.suites
python -m pytest
