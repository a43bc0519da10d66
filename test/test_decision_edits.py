"""A router rule's edits of a decision: add one tool, drop some (policies/base.py)."""
from __future__ import annotations

from tool_router.routing.policies.base import Decision, Evidence


def _decision():
    return Decision('lcr', ['land', 'battery_status'], [0.9, 0.8],
                    evidence={'land': [Evidence('model', 'land', 'x', 0.9)],
                              'battery_status': [Evidence('model', 'battery', 'y', 0.8)]},
                    clause_index={'land': 1, 'battery_status': 0},
                    conditions={'land': 'when the battery is below 20%'}, note='before')


def test_without_drops_a_tool_with_everything_that_was_its():
    d = _decision().without({'land'}, 'land dropped: why')
    assert d.tools == ['battery_status'] and d.scores == [0.8]
    assert set(d.evidence) == {'battery_status'} and d.clause_index == {'battery_status': 0}
    assert d.conditions == {} and not d.abstained
    assert d.note == 'before; land dropped: why'


def test_without_every_tool_is_an_abstention():
    d = _decision().without({'land', 'battery_status'})
    assert d.tools == [] and d.scores == [] and d.abstained and d.note == 'before'


def test_with_rule_tool_adds_one_tool_with_its_rule_evidence_and_gate():
    d = _decision().with_rule_tool('set_speed', 0.5, 1, 'at 5 m/s', 'explicit speed', 'if x')
    assert d.tools[-1] == 'set_speed' and d.scores[-1] == 0.5
    assert d.evidence['set_speed'][0].source == 'rule' and d.clause_index['set_speed'] == 1
    assert d.conditions['set_speed'] == 'if x'
