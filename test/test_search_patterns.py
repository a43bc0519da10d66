"""A named search pattern flown for a target flies and looks, whatever the policy
(routing/search_patterns.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision
from tool_router.routing.search_patterns import (
    add_search_pattern,
    named_shape_is_a_mission,
    shape_around_is_a_mission,
)

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
    # the pattern as the verb (stop 46)
    ('zigzag across the dunes looking for a lost kite', ['object_detector'], 'execute_mission'),
    ('spiral above the herd counting calves', ['object_detector'], 'execute_mission'),
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
    ('grid search for a red backpack', []),  # the scope decision said no
    ('spiral up to 50 m and look for the hiker', ['object_detector']),  # a climb, no pattern
    ('zigzag the beach for a while', ['execute_mission']),  # no target
])
def test_nothing_is_added_where_the_rule_does_not_apply(text, tools):
    d, facts = add_search_pattern(_decision(tools), text, CATALOG)
    assert facts is None and d.tools == tools


def test_with_neither_half_both_are_added_gated_as_the_clause():
    d, facts = add_search_pattern(_decision(['thermal_camera']),
                                  'thermal grid search for survivors', CATALOG)
    assert facts is not None and facts.tools == ('execute_mission', 'object_detector')
    assert d.tools == ['thermal_camera', 'execute_mission', 'object_detector']
    assert not d.conditions


@pytest.mark.parametrize('text', ['grid search for hours', 'spiral search for 3 loops'])
def test_a_bare_plural_of_time_is_no_target(text):
    d, facts = add_search_pattern(_decision(['execute_mission']), text, CATALOG)
    assert facts is None


@pytest.mark.parametrize('text', ['box pattern around Silo2', 'triangle around the three towers',
                                  'fly a square around the car park'])
def test_a_named_shape_around_something_is_a_mission_not_an_orbit(text):
    d, facts = shape_around_is_a_mission(_decision(['orbit_point']), text, CATALOG)
    assert facts is not None and d.tools == ['execute_mission']
    assert d.evidence['execute_mission'][0].source == 'rule' and 'orbit_point' not in d.evidence


@pytest.mark.parametrize('text, tools', [
    ('orbit the square', ['orbit_point']),  # a place to orbit
    ('circle around the box', ['orbit_point']),
    ('fly around the town square', ['orbit_point']),  # the shape after "around": a place
    ('is the square around the tower done?', ['orbit_point']),  # a question
    ('box pattern around Silo2', ['orbit_point', 'execute_mission']),  # the mission is there
])
def test_orbits_stay_where_the_shape_is_a_place_or_circling_is_said(text, tools):
    d, facts = shape_around_is_a_mission(_decision(tools), text, CATALOG)
    assert facts is None and d.tools == tools


@pytest.mark.parametrize('text, tools, expected', [
    ('fly a star shape', [], ['execute_mission']),  # into an empty answer
    ('make the drone fly a star shape', [], ['execute_mission']),
    ('give me a tour of the campus', ['goto_waypoint'], ['execute_mission']),
    ('do a 20 m hexagon over the lot', ['orbit_point'], ['execute_mission']),
    ('fly a square over the car park', ['goto_waypoint', 'execute_mission'], ['execute_mission']),
    ('climb 10 m, figure eight, land', [], ['execute_mission']),  # a bare shape as a step
    ('do the tour then land', ['goto_waypoint'], ['execute_mission']),
])
def test_a_named_shape_or_tour_ordered_flown_is_a_mission(text, tools, expected):
    d, facts = named_shape_is_a_mission(_decision(tools), text, CATALOG)
    assert facts is not None and d.tools == expected and not d.abstained


@pytest.mark.parametrize('text, tools', [
    ('fly to the square', ['goto_waypoint']),  # a place
    ('fly over the main square', ['goto_waypoint']),
    ("don't fly a square", []),  # negated
    ('how do I fly a figure eight?', []),  # a question
    ('write me a python script that makes my tello do a square', []),  # no order to fly it
    ('fly a square then orbit the tower', ['execute_mission', 'orbit_point']),
])
def test_no_mission_where_no_shape_is_ordered_flown(text, tools):
    decision = _decision(tools)
    if 'orbit_point' in tools:  # the orbit is the second clause's
        decision.clause_index['orbit_point'] = 1
    d, facts = named_shape_is_a_mission(decision, text, CATALOG)
    assert facts is None and d.tools == tools
