"""benchmarks/durability.py at smoke size: SIGKILLs under a stream lose no acknowledged request."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))

pytestmark = pytest.mark.slow  # starts ROS processes


def test_durability_smoke(tmp_path):
    from durability import run
    report = run(kills=2, rate_hz=20.0, critical_every=4, seed=1, trace_dir=tmp_path)
    assert report['acknowledged'] > 10, report
    assert report['lost'] == 0 and report['bad_lines'] == 0, report
    assert report['acknowledged_on_disk'] == report['acknowledged']
    assert len(report['unfinished_after_each_kill']) == 2
