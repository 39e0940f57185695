#!/usr/bin/env bash
# Create .venv (if missing) and install UCMA with the extras named in $1 (default: local).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local}"
python3 -m venv .venv
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
python -m pip install --quiet -e ".[${extras}]"
