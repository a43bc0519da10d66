#!/usr/bin/env bash
# The full test suite (what CI runs). Needs scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
source .venv/bin/activate
exec python -m pytest -q -p no:cacheprovider test "$@"
