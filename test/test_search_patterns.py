"""A named search pattern flown for a target flies and looks, whatever the policy
(routing/search_patterns.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision
from tool_router.routing.search_patterns import add_search_pattern

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, conditions=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index={t: 0 for t in tools}, conditions=conditions or {})


@pytest.mark.parametrize('text, tools, added', [
    ('grid search for a red backpack', ['object_detector'], 'execute_mission'),
    ('run a spiral search for the missing hiker', ['execute_mission'], 'object_detector'),
    ('fly a lawnmower pattern over the meadow looking for a lost dog', ['execute_mission'],
     'object_detector'),
    ('expanding square search to find the kayak', ['object_detector'], 'execute_mission'),
    ('do a creeping line search over the beach for any swimmers', ['object_detector'],
     'execute_mission'),
])
def test_a_pattern_for_a_target_gets_the_missing_half(text, tools, added):
    d, facts = add_search_pattern(_decision(tools), text, CATALOG)
    assert facts is not None and facts.tools == (added,)
    assert {'execute_mission', 'object_detector'} <= set(d.tools)
    assert len(d.scores) == len(d.tools) and d.evidence[added][0].source == 'rule'


def test_the_added_half_is_gated_as_the_present_one():
    gate = 'when the battery is above 50%'
    d, facts = add_search_pattern(
        _decision(['execute_mission'], {'execute_mission': gate}),
        'when the battery is above 50%, run a grid search for the missing child', CATALOG)
    assert facts is not None and d.conditions['object_detector'] == gate


@pytest.mark.parametrize('text, tools', [
    ('grid search for 10 minutes', ['execute_mission']),  # a duration, not a target
    ('run a spiral search for the next half hour', ['execute_mission']),
    ('grid search the whole field', ['execute_mission']),  # no target named
    ('did you finish the grid search for the hiker?', ['execute_mission']),  # a question
    ("don't run a grid search for the dog", ['object_detector']),  # negated
    ('grid search for a red backpack', ['execute_mission', 'object_detector']),  # complete
    ('grid search for a red backpack', ['goto_waypoint']),  # neither half was read
    ('grid search for a red backpack', []),  # the scope decision said no
])
def test_nothing_is_added_where_the_rule_does_not_apply(text, tools):
    d, facts = add_search_pattern(_decision(tools), text, CATALOG)
    assert facts is None and d.tools == tools
