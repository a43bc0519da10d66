"""Smoke sizes of the reliability benchmarks (fuzz, load): they run end to end over ROS and
report what the full runs report (benchmarks/RESULTS.md has the full sizes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # starts ROS processes and loads MiniLM


def run(script: str, out: Path, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(ROOT / 'benchmarks' / script), *args, '--out', str(out)],
        capture_output=True, text=True, timeout=900, env=env, cwd=ROOT,
    )
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    report['_exit'] = proc.returncode
    return report


def test_fuzz_smoke(tmp_path):
    report = run('fuzz.py', tmp_path / 'fuzz.json',
                 '--inputs', '400', '--encoder-every', '40', '--ros', '30', '--clients', '2')
    ip = report['in_process']['counts']
    assert ip['inputs'] == 400 and ip['hypothesis_inputs'] == 100
    assert ip['routed'] >= 1 and ip['rejected'] >= 1
    assert (ip['crashes'], ip['out_of_catalog'], ip['escaped']) == (0, 0, 0)
    ros = report['ros']
    assert ros['counts']['sent'] == 30 and ros['counts']['unanswered'] == 0
    assert ros['node_alive_at_end'] and ros['bad_utf8_logged']
    assert report['problems'] == 0 and report['_exit'] == 0


def test_load_smoke(tmp_path):
    report = run('load.py', tmp_path / 'load.json',
                 '--clients', '2', '--requests', '5', '--no-executor')
    counts = report['counts']
    assert counts['sent'] == 10 and counts['unanswered'] == 0
    assert counts['answered'] == counts['success'] + counts['busy'] + counts['refused'] == 10
    assert report['served_alive_at_end'] and report['latency_ms']['p50'] > 0
    assert report['_exit'] == 0


def test_default_qos_clients_smoke(tmp_path):
    """Client processes with rclpy's default QoS: the topic path answers every call."""
    report = run('default_qos_clients.py', tmp_path / 'qos.json', '--clients', '3',
                 '--calls', '4')
    topic, service = report['topic']['counts'], report['service']['counts']
    assert topic['sent'] == 12 and topic['client_failures'] == 0
    assert topic['unanswered'] == 0 and topic['answered'] == 12
    assert topic['success'] + topic['busy'] == 12 and topic['success'] >= 1
    assert service['sent'] == 12 and service['client_failures'] == 0  # its losses: a figure
    assert report['router_alive_at_end'] and report['_exit'] == 0
