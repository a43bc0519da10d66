""""Face home" turns the vehicle; it does not fly it home (routing/face_home.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.face_home import face_home_is_a_heading
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))



@pytest.mark.parametrize('text, index, expected', [
    ('climb to 40 m, face home and snap a photo',
     {'set_altitude': 0, 'return_to_home': 1, 'set_heading': 1, 'rgb_camera': 2},
     ['set_altitude', 'set_heading', 'rgb_camera']),
    # the policy chose no heading there: the turn gets its own tool
    ('point the nose towards home', {'return_to_home': 0}, ['set_heading']),
    ('turn to face the launch point then record', {'return_to_home': 0, 'video_recorder': 1},
     ['video_recorder', 'set_heading']),
])
def test_a_turn_towards_home_is_a_heading(text, index, expected):
    d, fact = face_home_is_a_heading(rule_decision(index), text, CATALOG)
    assert fact is not None and d.tools == expected and 'return_to_home dropped' in d.note
    assert not d.abstained  # a tool is still served (it had said abstained)


@pytest.mark.parametrize('text', ['come home', 'turn around and come home', 'head home now',
                                  'turn back home', 'turn home now',
                                  'go home and face north', "don't face home, come home"])
def test_a_flight_home_stays(text):
    index = {'return_to_home': 0, 'set_heading': 1}
    d, fact = face_home_is_a_heading(rule_decision(index), text, CATALOG)
    assert fact is None and d.tools == list(index)
