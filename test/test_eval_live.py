"""Live evaluation against a real router node process, recorded to a bag and scored again."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tool_router.routing.config import load_router_config
from procs import NodeProcess

pytestmark = pytest.mark.slow  # starts ROS or server processes

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / 'benchmarks' / 'smoke.jsonl'


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, '-m', 'tool_router.cli', *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope='module')
def router_node():
    node = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true')
    try:
        assert node.wait_for('serving /route_request', 120), node.output[-3000:]
        yield node
    finally:
        node.stop()


def _predictions(path: Path) -> dict:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    # sets: the service answers best-first, the published selection is in clause (dispatch) order
    return {(r['request'], r['policy']): (sorted(r['predicted']), r['composite']) for r in rows}


def test_live_eval_records_a_bag_that_scores_the_same(router_node, tmp_path):
    live, bag, again = tmp_path / 'live', tmp_path / 'session', tmp_path / 'again'
    # --limit 12: the first 10 direct requests of the slice and two consequential ones
    proc = _cli('eval', '--dataset', str(SMOKE), '--policies', 'cdbv2,default', '--limit', '12',
                '--live', '--record-out', str(bag), '--out', str(live), '--no-plots')
    assert proc.returncode == 0, proc.stderr[-3000:] + router_node.output[-2000:]
    report = json.loads((live / 'report.json').read_text())
    assert report['run']['mode'] == 'live'
    default = load_router_config().policy
    assert list(report['policies']) == ['cdbv2', default]
    assert report['policies'][default]['default'] is True
    for p in report['policies'].values():
        assert p['latency_ms']['n'] == 12 and p['latency_ms']['p50'] > 0
        assert 0 <= p['macro']['composite'] <= 1
    assert (bag / 'metadata.yaml').exists()

    proc = _cli('eval', '--dataset', str(bag), '--out', str(again), '--no-plots')
    assert proc.returncode == 0, proc.stderr[-3000:]
    recorded = json.loads((again / 'report.json').read_text())
    assert recorded['run']['mode'] == 'recorded'
    assert recorded['dataset']['n'] == 12
    assert _predictions(again / 'predictions.jsonl') == _predictions(live / 'predictions.jsonl')
    for name, p in report['policies'].items():
        assert recorded['policies'][name]['levels'] == p['levels']
        assert recorded['policies'][name]['latency_ms']['n'] >= 1
