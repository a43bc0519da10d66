"""benchmarks/flood.py at smoke size: the executor reads a flood and still serves genuine copies.

The figures (read rate, per-copy survival) are the benchmark's, from one run, never bounds
here: this checks what happened. Every genuine copy is acknowledged without the flood; the
flood was read (refused, counted) and nothing forged ran.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))

pytestmark = pytest.mark.slow  # starts ROS processes


def test_flood_smoke(tmp_path):
    from flood import run
    report = run(genuine=20, rate_hz=10.0, flood_rate=2000.0, trace_dir=tmp_path, settle_s=1.0)
    assert report['control_acknowledged'] == 20, report
    assert report['forged_sent'] > 1000, report
    # the executor read the flood: its refusals (one by one and summarized) count what it took
    assert report['forged_read_by_executor'] > 0, report
    assert report['forged_lines_not_refusals'] == 0, report  # nothing forged was received or ran
    assert report['executor_exit_code'] == 0, report
    assert 0 <= report['flooded_acknowledged'] <= 20
    # the phases that re-send as the router does: every request went out at least once
    assert set(report['resent_every_s']) == {'0.25', '0.1'}, report
    for phase in report['resent_every_s'].values():
        assert phase['copies_per_request'] >= 1 and 0 <= phase['served'] <= 1, report
