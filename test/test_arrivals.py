"""An arrival at a place is a position condition, whatever the policy (routing/arrivals.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.arrivals import add_arrival_sensor, arrival_place
from tool_router.routing.policies.base import Decision
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))


@pytest.mark.parametrize('condition, place', [
    ('you get to the gate', 'the gate'),
    ("you're over the field", 'the field'),
    ('we reach the dock', 'the dock'),
    ('arrival at the barn', 'the barn'),
    ('at the car park', 'the car park'),
    ('we get to PanelB', 'PanelB'),
    ('it reaches Depot_4', 'Depot_4'),
    ("you're over pad C", 'pad C'),  # a noun and the letter that names it
    ('we get to gate b', ''),  # (a lowercase letter is no name)
    ('it is over I', ''),
    ('you reach 50 m', ''),  # an altitude
    ('we hit waypoint 5', ''),
    ("you're over 47.401, 8.553", ''),  # coordinates: the parser reads them
    ("it's in the air", ''),  # a state
    ("it's landed", ''),
    ("it's done", ''),
    ('you get a chance', ''),
    ('you reach the end of the row', ''),
])
def test_what_is_an_arrival_at_a_place(condition, place):
    assert arrival_place(condition) == place


def _decision(tools):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index={t: 1 for t in tools}, conditions={t: 'x' for t in tools})


def test_an_arrival_condition_gets_its_sensor_for_its_clause():
    d, added = add_arrival_sensor(_decision(['payload_release']),
                                  'when you get to the gate drop the package', CATALOG)
    assert added is not None and added.place == 'the gate'
    assert d.tools == ['payload_release', 'gps_position'] and d.clause_index['gps_position'] == 0
    assert d.evidence['gps_position'][0].source == 'rule' and 'gps_position' not in d.conditions


@pytest.mark.parametrize('text, tools', [
    ('when you reach the gate take a photo', ['gps_position', 'rgb_camera']),  # has it
    ('when you reach 50 m take a photo', ['rgb_camera']),
    ('once it is in the air start the video', ['video_recorder']),
    ('how long before it reaches the gate', ['vehicle_state']),  # a question
    ('take a photo at the gate', ['rgb_camera']),  # a place to act at, not a condition
    ('when you get to the gate drop the package', []),  # an empty answer stays empty
])
def test_no_sensor_is_added_where_there_is_no_arrival_or_it_is_there(text, tools):
    d, added = add_arrival_sensor(_decision(tools), text, CATALOG)
    assert added is None and d.tools == tools


def test_a_waypoint_condition_gets_the_missions_progress():
    from tool_router.routing.arrivals import add_waypoint_progress
    d, fact = add_waypoint_progress(rule_decision({'winch_control': 1}),
                                    'at waypoint 4 lower the winch', CATALOG)
    assert fact is not None and d.tools == ['winch_control', 'vehicle_state']
    assert d.clause_index['vehicle_state'] == 0
    # a destination is no condition; a question adds nothing
    for text in ('fly to waypoint 3 and hover', 'did we pass waypoint 4?'):
        same = rule_decision({'goto_waypoint': 0})
        assert add_waypoint_progress(same, text, CATALOG) == (same, None)
