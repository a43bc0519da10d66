""""Go ... until you see X" moves and looks, whatever the policy (routing/until_seen.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision
from tool_router.routing.until_seen import add_until_seen

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, conditions=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index={t: i for i, t in enumerate(tools)},
                    conditions=conditions or {})


@pytest.mark.parametrize('text, tools, added', [
    ('keep heading north until you find a white van', ['object_detector'], ('goto_waypoint',)),
    ('go straight until a person shows up', ['object_detector'], ('goto_waypoint',)),
    ('move east until the tower comes into view', ['goto_waypoint'], ('object_detector',)),
    ('cruise along the canal till we spot a heron', ['set_altitude'],
     ('goto_waypoint', 'object_detector')),
    ('drift downstream until the camera picks up a kayak', ['object_detector'],
     ('goto_waypoint',)),
])
def test_a_travel_order_until_a_sighting_gets_the_move_and_the_detector(text, tools, added):
    d, facts = add_until_seen(_decision(tools), text, CATALOG)
    assert facts is not None and facts.tools == added
    assert {'goto_waypoint', 'object_detector'} <= set(d.tools)
    assert len(d.scores) == len(d.tools)
    for tool in added:
        assert d.evidence[tool][0].source == 'rule' and tool not in d.conditions
    assert d.clause_index['goto_waypoint'] == 0 or 'goto_waypoint' in tools


def test_the_move_is_never_gated_by_the_sighting_that_ends_it():
    d, facts = add_until_seen(
        _decision(['object_detector'], {'goto_waypoint': 'until you find a white van'}),
        'keep heading north until you find a white van', CATALOG)
    assert facts is not None and 'goto_waypoint' not in d.conditions
    assert d.clause_index['goto_waypoint'] == 0 and d.clause_index['object_detector'] == 0


@pytest.mark.parametrize('text, tools', [
    ('hover until you see the car', ['hold_position', 'object_detector']),
    ('hold position until a person appears', ['hold_position', 'object_detector']),
    ('search the field until you find the dog', ['object_detector']),
    ('orbit the barn until you spot the cat', ['orbit_point', 'object_detector']),
    ('fly north until you see the battery drop below 30%', ['goto_waypoint', 'battery_status']),
    ('keep flying until the battery level shows up as low', ['goto_waypoint']),
    ('did you fly north until you found the van?', ['object_detector']),
    ("don't go north until you see the van", ['object_detector']),
    ('fly north and look for a white van', ['goto_waypoint']),
    ('fly north until you see the red tent', ['goto_waypoint', 'object_detector']),  # complete
])
def test_no_move_is_added_where_the_order_stays_asks_or_reads_a_state(text, tools):
    d, facts = add_until_seen(_decision(tools), text, CATALOG)
    assert facts is None and d.tools == tools


def test_an_empty_answer_stays_empty():  # the scope decision said no: the rule adds nothing
    d, facts = add_until_seen(_decision([]), 'go straight until a person shows up', CATALOG)
    assert facts is None and d.tools == []
