"""A picture of what is behind the vehicle turns it first (routing/rear_view.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision
from tool_router.routing.rear_view import add_rear_view_turn

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, clause_index=None, conditions=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=dict(clause_index or {t: 0 for t in tools}),
                    conditions=dict(conditions or {}))


@pytest.mark.parametrize('text, camera', [
    ('take a pic of the road behind us', 'rgb_camera'),
    ("pic of whatever's behind us", 'rgb_camera'),
    ('thermal image of what is behind the drone', 'thermal_camera'),
    ('film whatever is at our six', 'video_recorder'),
])
def test_a_camera_looking_behind_the_vehicle_turns_it(text, camera):
    d, fact = add_rear_view_turn(_decision([camera]), text, CATALOG)
    assert fact is not None and fact.camera == camera
    assert d.tools == [camera, 'set_heading'] and d.clause_index['set_heading'] == 0


@pytest.mark.parametrize('text, tools', [
    ('the lifeguard tower is behind us; announce that the beach closes', ['speaker_broadcast']),
    ('anything close behind us', ['obstacle_proximity']),        # no camera
    ('photo of the car behind the barn', ['rgb_camera']),         # a place, not our rear
    ("don't take a pic of what's behind us", ['rgb_camera']),     # negated
])
def test_anything_else_adds_no_turn(text, tools):
    d, fact = add_rear_view_turn(_decision(tools), text, CATALOG)
    assert fact is None and d.tools == tools


def test_only_the_cameras_clause_is_read_and_its_condition_kept():
    # the camera is chosen for the second clause; the first says nothing of the rear
    text = 'if the light is off, take a pic of whats behind us'
    d, fact = add_rear_view_turn(
        _decision(['rgb_camera'], {'rgb_camera': 1}, {'rgb_camera': 'if the light is off'}),
        text, CATALOG)
    assert fact is not None and d.conditions['set_heading'] == 'if the light is off'
    d, fact = add_rear_view_turn(_decision(['rgb_camera'], {'rgb_camera': 1}),
                                 'the tower is behind us, photo of the river', CATALOG)
    assert fact is None and d.tools == ['rgb_camera']
