"""A height to fly a move at adds set_altitude, whatever the policy (routing/move_heights.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.move_heights import add_move_heights, move_height
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))
GOTO, MISSION, ORBIT = {'goto_waypoint'}, {'execute_mission'}, {'orbit_point'}


@pytest.mark.parametrize('text, moves, height', [
    ('fly the grid at 60 m', MISSION, '60 m'),
    ('go to the Silo at 40 m', GOTO, '40 m'),
    ('head to 120,45 at 50 m', GOTO, '50 m'),
    ('go to wp 3 at a height of 40 ft', GOTO, '40 ft'),
    ('fly to the mast at an altitude of twenty metres', GOTO, '20 metres'),
    ('orbit Tower2 at 15 m height', ORBIT, '15 m'),  # said to be a height
    ('orbit Tower2 25 m up at 3 m/s', ORBIT, '25 m'),
    # an orbit's "at N m" is its radius, a follow's its distance
    ('orbit the Silo at 30 m', ORBIT, ''),
    ('follow the car at 10 m', {'follow_target'}, ''),
    # a place, a distance, a speed, a spacing
    ('i want the drone at 12 m east', GOTO, ''),
    ('fly to the mast and stop at 20 m from it', GOTO, ''),
    ('fly to the gate at 5 m/s', GOTO, ''),
    ('survey the field at 5 m intervals', MISSION, ''),
    ('fly 30 m north', GOTO, ''),
])
def test_the_height_a_move_names(text, moves, height):
    assert move_height(text, moves) == height


def _decision(tools, clause_index=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=clause_index or {t: 0 for t in tools})


def test_a_move_with_a_height_gets_set_altitude_with_its_clauses_score():
    d, added = add_move_heights(
        _decision(['rgb_camera', 'goto_waypoint'], {'rgb_camera': 1, 'goto_waypoint': 0}),
        'go to 34.05,-118.25 at 100 ft and snap a pic', CATALOG)
    assert d.tools[-1] == 'set_altitude' and d.scores[-1] == pytest.approx(0.8)
    assert added is not None and added.height == '100 ft' and d.clause_index['set_altitude'] == 0
    assert d.evidence['set_altitude'][0].source == 'rule'


@pytest.mark.parametrize('text, tools', [
    ('once at 100 ft, hover', ['altitude_sensor', 'hold_position']),  # a condition's height
    ('take off to 30 m', ['takeoff']),  # the takeoff's own height
    ('are we flying the grid at 60 m?', ['vehicle_state']),  # a question
    ('announce that we fly the grid at 60 m', ['speaker_broadcast']),  # a message
    ("don't fly the grid at 60 m", ['execute_mission']),  # negated
    ('fly the grid at 60 m', ['execute_mission', 'set_altitude']),  # already there
    ('orbit the silo at 30 m', ['orbit_point']),  # a radius
])
def test_what_adds_no_height(text, tools):
    d, added = add_move_heights(_decision(tools), text, CATALOG)
    assert added is None and d.tools == tools


def test_the_height_is_gated_as_its_move():
    text = 'if the wind drops below 5 m/s, fly the grid at 60 m'
    d = Decision('lcr', ['wind_estimate', 'execute_mission'], [0.9, 0.8],
                 clause_index={'wind_estimate': 0, 'execute_mission': 1},
                 conditions={'execute_mission': 'if the wind drops below 5 m/s'})
    d, added = add_move_heights(d, text, CATALOG)
    assert added is not None and d.conditions['set_altitude'] == 'if the wind drops below 5 m/s'
