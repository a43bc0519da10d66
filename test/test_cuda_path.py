"""The router on CUDA answers as on the CPU (runs only where torch sees CUDA; skipped here).

The same weights, catalog and exemplar memory; torch on the CPU against torch on CUDA, over the
first 50 v2 dev requests: the same tools in the same order, and scores within 1e-3 (float32
kernels differ between devices in their last bits). benchmarks/cuda_path.py measures the same
thing on more requests, with latency.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip('torch')
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason='no CUDA device here')

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))


@pytest.mark.skipif(torch.cuda.is_available(), reason='CUDA is here: the benchmark runs')
def test_the_benchmark_says_so_where_there_is_no_cuda():
    import subprocess

    out = subprocess.run([sys.executable, str(ROOT / 'benchmarks/cuda_path.py'), '-n', '1'],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 2 and 'CUDA is not available' in out.stderr, out.stderr[-2000:]


@pytest.mark.slow
@needs_cuda
def test_cuda_routes_as_the_cpu_does():
    from cuda_path import compare

    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    def make(device: str) -> Router:
        return Router(load_router_config(overrides={
            'chroma_ephemeral': True, 'encoder.backend': 'torch', 'device': device}))

    lines = (ROOT / 'benchmarks/data/v2/dev.jsonl').read_text(encoding='utf-8').splitlines()
    texts = [json.loads(line)['request'] for line in lines[:50]]
    cuda, cpu = make('cuda'), make('cpu')
    assert cuda.health()['device'].startswith('cuda') and cpu.health()['device'] == 'cpu'
    results = {'cpu': [cpu.route(t) for t in texts], 'cuda': [cuda.route(t) for t in texts]}
    row = compare(results, 'cpu')['cuda']
    assert row['same_tools'] == len(texts), row['changed']
    assert row['max_score_diff'] < 1e-3
