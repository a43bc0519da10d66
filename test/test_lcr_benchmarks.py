"""The lcr benchmark scripts: the annotation-convention check and the hybrid gate's call rate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(ROOT / 'benchmarks' / script), *args],
                          capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)


def test_convention_check_flags_only_what_lacks_the_named_tool(tmp_path):
    lines = [
        {'id': 'a', 'level': 'direct', 'request': 'fly 4 m forward', 'tools': ['rgb_camera']},
        {'id': 'b', 'level': 'direct', 'request': 'fly 4 m forward', 'tools': ['goto_waypoint']},
        {'id': 'c', 'level': 'direct', 'request': 'run the zigzag over the field',
         'tools': ['execute_mission']},
        {'id': 'd', 'level': 'out_of_scope', 'request': 'switch to GUIDED', 'tools': []},
    ]
    data = tmp_path / 'reqs.jsonl'
    data.write_text(''.join(json.dumps(x) + '\n' for x in lines), encoding='utf-8')
    out = run('check_conventions.py', str(data)).stdout.splitlines()
    assert len(out) == 2
    assert ' a [relative move' in out[0] and '-> goto_waypoint?' in out[0]
    assert ' d [other mode' in out[1] and '(out_of_scope)' in out[1]


@pytest.mark.slow  # loads MiniLM and routes through hybrid over a real HTTP server
def test_hybrid_gate_counts_the_calls_the_server_received(tmp_path):
    out = tmp_path / 'gate.json'
    proc = run('hybrid_gate.py', '--dataset', str(ROOT / 'benchmarks/data/v2/dev.jsonl'),
               '--limit', '12', '--out', str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    shipped, on_abstain = json.loads(out.read_text())
    assert (shipped['gate_on_abstain'], on_abstain['gate_on_abstain']) == (False, True)
    for row in (shipped, on_abstain):
        assert row['requests'] == 12 and row['call_rate'] == round(row['llm_calls'] / 12, 4)
    assert on_abstain['llm_calls'] >= shipped['llm_calls']
    for sent in on_abstain['abstentions_sent'].values():  # every abstention asks the LLM
        asked, _, total = sent.split()
        assert asked == total
