#!/usr/bin/env bash
# Refit the shipped routing model from the development split (docs/ENCODER.md, "Reproduce"):
# the encoder patch on all of dev, one fold patch per writer fold (each trained without that
# fold's writers), then lcr fitted on out-of-fold similarities (--cross-fit). About an hour on
# a 2-core CPU (two fine-tunes at a time); fold patches are kept under $WORK (named by the dataset's hash) and reused.
#   bash scripts/fit_model.sh [DATASET] [WORK]
set -euo pipefail
cd "$(dirname "$0")/.."
source .venv/bin/activate
# This checkout's code and config/, not the installed copy: the `tool-router` of .venv is the
# package as `scripts/setup.sh` installed it, and its --force writes into the install's share
# directory (.venv/share/tool_router/config), where git never sees the refit.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
tool-router() { python -m tool_router.cli "$@"; }
DATASET=${1:-benchmarks/data/v2/dev.jsonl}
WORK=${2:-${TOOL_ROUTER_CACHE:-$HOME/.cache/tool_router}/crossfit/$(sha256sum "$DATASET" | cut -c1-12)}
FOLDS=4
mkdir -p "$WORK"
fine_tune() {  # fold (or "full") -> patch
  if [ "$1" = full ]; then
    tool-router fit encoder --dataset "$DATASET" --force
  elif [ ! -f "$WORK/fold$1.safetensors" ]; then
    tool-router fit encoder --dataset "$DATASET" --fold "$1" --folds $FOLDS \
      --out "$WORK/fold$1.safetensors"
  fi
}
# two single-threaded fine-tunes at a time (each is deterministic on its own)
fine_tune full & a=$!; fine_tune 0 & b=$!; wait $a; wait $b
fine_tune 1 & a=$!; fine_tune 2 & b=$!; wait $a; wait $b
fine_tune 3
tool-router fit lcr --dataset "$DATASET" --force \
  --cross-fit $(for k in $(seq 0 $((FOLDS - 1))); do echo "$WORK/fold$k.safetensors"; done)
# the question probe reads the new encoder's request vectors (routing/question_probe.py)
tool-router fit questions --dataset "$DATASET" --force
