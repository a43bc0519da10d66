#!/usr/bin/env bash
# What CI runs: lint (ruff), types (mypy --strict on the pure core), then the tests.
# Needs scripts/setup.sh first. Arguments go to pytest, e.g. -m "not slow" for the
# fast tier (docs/TESTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source .venv/bin/activate
echo "ruff check ." >&2
ruff check .
echo "mypy --strict (files: setup.cfg [mypy])" >&2
mypy --strict
exec python -m pytest -q -p no:cacheprovider test "$@"
