""""Stop the mission" holds the vehicle; it runs no mission (routing/mission_stops.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.mission_stops import mission_stop_is_a_hold
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))



@pytest.mark.parametrize('text, index, expected', [
    ('halt the patrol', {'execute_mission': 0}, ['hold_position']),
    ('pause the survey and take a photo', {'execute_mission': 0, 'hold_position': 0,
                                           'rgb_camera': 1}, ['hold_position', 'rgb_camera']),
    # an abort is followed by what comes next: no hold of its own
    ('abort the route and land', {'execute_mission': 0, 'land': 1}, ['land']),
])
def test_a_stopped_mission_is_a_hold(text, index, expected):
    d, fact = mission_stop_is_a_hold(rule_decision(index), text, CATALOG)
    assert fact is not None and d.tools == expected and 'execute_mission dropped' in d.note
    assert not d.abstained  # a tool is still served (it had said abstained)


@pytest.mark.parametrize('text, index', [
    ('pause the survey, then resume it', {'hold_position': 0, 'execute_mission': 1}),
    ('stop the mission and start the next one', {'execute_mission': 0}),
    ("don't stop the mission", {'execute_mission': 0}),
    ('run the fence survey', {'execute_mission': 0}),
    # the mission was chosen for another clause
    ('stop recording and fly the survey', {'video_recorder': 0, 'execute_mission': 1}),
])
def test_a_mission_that_goes_on_stays(text, index):
    d, fact = mission_stop_is_a_hold(rule_decision(index), text, CATALOG)
    assert fact is None and d.tools == list(index)
