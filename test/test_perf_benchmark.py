"""benchmarks/perf.py at its smoke size completes and reports every figure (no timing asserts)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

KEYS = {
    'floor_p50_ms', 'lcr_p50_ms', 'lcr_p99_ms', 'lcr_over_floor', 'lcr_p99_over_p50',
    'loaded_lcr_p50_ms', 'loaded_over_idle', 'loaded_forward_1thr_p50_ms',
    'idle_forward_1thr_p50_ms', 'ros_p50_ms', 'ros_p99_ms', 'ros_overhead_ms',
    'single_client_rps', 'clients', 'clients_throughput_ratio', 'clients_p99_over_single_p50',
    'cold_start_s', 'cold_start_build_s', 'big_tools', 'big_build_s', 'big_rss_growth_mb',
    'big_lcr_p50_ms', 'big_over_small_p50',
}


def test_perf_smoke_reports_every_figure(tmp_path):
    out = tmp_path / 'perf.json'
    proc = subprocess.run(
        [sys.executable, 'benchmarks/perf.py', '--smoke', '--nice', '-5', '--json', str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert KEYS <= set(figures), KEYS - set(figures)
    assert figures['clients']['requests'] == 2 * 4
    # the loaded rows at a raised priority, or a warning where the process may not raise it
    assert 'loaded_nice_over_idle' in figures or 'not permitted' in figures['nice_warning']
    # every request of the smoke run was answered (success or "busy"), none lost
    assert figures['clients']['unanswered'] == 0
    assert '| floor: one forward pass of the request |' in proc.stdout
