"""A question about a payload's state is vehicle_state's (routing/payload_questions.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.payload_questions import answer_payload_questions
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, clause_index=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=clause_index or {t: 0 for t in tools})


@pytest.mark.parametrize('text, tools', [
    ("what's the gimbal pitch right now", ['attitude_imu']),
    ('where is the camera pointing', ['gps_position']),
    ('which way is the camera looking?', ['compass_heading']),
    ('is the gimbal tilted down?', ['attitude_imu', 'vehicle_state']),
    ('report gimbal angle', ['attitude_imu']),
    ('how far down is the hook?', ['altitude_sensor']),
    ('winch position', ['gps_position']),
    ('is the cable still paying out?', ['link_quality']),
])
def test_the_airframes_pose_gives_way_to_the_payloads_state(text, tools):
    d, q = answer_payload_questions(_decision(tools), text, CATALOG)
    assert d.tools == ['vehicle_state'] and q is not None
    # the best score of the pose sensors, or vehicle_state's own when it was there
    assert d.scores[0] == pytest.approx(0.9 if tools[0] != 'vehicle_state' and len(tools) == 1
                                        else 0.8)


def test_other_clauses_keep_their_tools():
    d, q = answer_payload_questions(
        _decision(['rgb_camera', 'attitude_imu'], {'rgb_camera': 0, 'attitude_imu': 1}),
        'take a photo. is the gimbal level?', CATALOG)
    assert q is not None and set(d.tools) == {'rgb_camera', 'vehicle_state'}


@pytest.mark.parametrize('text, tools', [
    ('tilt the gimbal down and take a photo', ['gimbal_control', 'rgb_camera']),  # an order
    ('is the drone level?', ['attitude_imu']),  # the airframe's own pose
    ("what's the optimal gimbal tilt setting for real estate photos?", []),  # never into empty
    ('what pitch are we at?', ['attitude_imu']),
    ('lower the hook 5 m', ['winch_control']),  # an order
    ('how high are we with the winch out?', ['altitude_sensor', 'vehicle_state']),
])
def test_what_the_rule_leaves(text, tools):
    d, q = answer_payload_questions(_decision(tools), text, CATALOG)
    assert q is None and d.tools == tools
