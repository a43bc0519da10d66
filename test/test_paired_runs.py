"""Paired comparison of two evaluation runs (benchmarks/paired_runs.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))

from paired_runs import compare, load, main  # noqa: E402


def _row(rid, level, predicted, composite, policy='lcr'):
    return {'id': rid, 'level': level, 'policy': policy, 'repeat': 0, 'predicted': predicted,
            'composite': composite}


def test_two_runs_are_compared_request_by_request(tmp_path, capsys):
    before = [_row('a', 'direct', ['land'], 1.0), _row('b', 'direct', [], 0.0),
              _row('c', 'out_of_scope', [], 1.0), _row('a', 'direct', ['x'], 0.0, 'cdbv3')]
    after = [_row('a', 'direct', ['land'], 1.0), _row('b', 'direct', ['land'], 1.0),
             _row('c', 'out_of_scope', ['land'], 0.0)]
    for name, rows in (('before', before), ('after', after)):
        (tmp_path / name).write_text('\n'.join(json.dumps(r) for r in rows), encoding='utf-8')
    got = compare(load(tmp_path / 'before', 'lcr'), load(tmp_path / 'after', 'lcr'))
    assert got['in_scope'] == 2 and got['delta'] == 0.5
    assert got['changed'] == 2 and got['better'] == 1 and got['worse'] == 1
    assert got['in_scope_empty'] == (1, 0) and got['out_of_scope_empty'] == (1, 0, 1)
    assert got['ci95'][0] <= 0.5 <= got['ci95'][1]
    assert main([str(tmp_path / 'before'), str(tmp_path / 'after')]) == 0
    assert 'delta +0.5000' in capsys.readouterr().out
