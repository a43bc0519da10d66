"""A request made only of catalog words reads as their tools (routing/keyword_runs.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.keyword_runs import KeywordRuns
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))
RUNS = KeywordRuns(CATALOG)


def _decision(tools, clause_index=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=dict(clause_index or {t: 0 for t in tools}),
                    abstained=not tools)


@pytest.mark.parametrize('text, tools', [
    ('alt speed heading?', ('altitude_sensor', 'velocity_estimate', 'compass_heading')),
    ('esc, imu and health status', ('motor_status', 'attitude_imu', 'system_health')),
    ('arm takeoff hover', ('arm_motors', 'takeoff', 'hold_position')),
    ('takeoff 10 m + hover 30 s -> rtl', ('takeoff', 'hold_position', 'return_to_home')),
    ('lidar, multispectral and rgb of the orchard',
     ('lidar_scanner', 'multispectral_camera', 'rgb_camera')),
    ('battery? gps? link?', ('battery_status', 'gps_position', 'link_quality')),
    ('thermal snapshot, rtl', ('thermal_camera', 'return_to_home')),  # the camera's picture
    ('thermal, snapshot', ('thermal_camera', 'rgb_camera')),
    # an order's place follows it; two orders side by side when a verb leads the second
    ('takeoff fly to the barn photo rtl',
     ('takeoff', 'goto_waypoint', 'rgb_camera', 'return_to_home')),
    ('arm takeoff go to wp3 hover 10 s land',
     ('arm_motors', 'takeoff', 'goto_waypoint', 'hold_position', 'land')),
    ('fly to tower_07 then orbit the old mill, rtl',
     ('goto_waypoint', 'orbit_point', 'return_to_home')),
])
def test_a_run_of_catalog_words_is_read(text, tools):
    assert tuple(dict.fromkeys(t for _, t in RUNS.read(text))) == tools


@pytest.mark.parametrize('text', [
    'battery',                       # one tool: the policy's call
    'tilt camera down 45 deg',       # "camera" alone is no keyword: one unknown word
    'pause the route',               # "the" between two orders is no separator
    'no photo, land',                # a negation
    'if battery low land',           # a condition word
    'alt 30 then photo',             # a number after a reading: to set or to read?
    'gas leak detection',            # two keywords side by side, one of two words
    'hold mode please',              # a mode is a switch, not a list item
    'mode LAND',
    'follow me mode',
    'land and photo of the barn',    # "of the barn" follows readings only
    'ALT_HOLD please',
    'go up go up lift off',          # a word said twice is emphasis, not a list
    'patrol loop around the campsite',  # no verb leads "loop around": one order, not two
    'fly to Tower7 at 2 m/s',        # one order and its speed
    'Track and follow a selected person',  # a follow's object is no place
    'rtl alt?',                      # the order's own setting (a parameter), one thing
    'takeoff speed',
])
def test_anything_else_is_left_to_the_policy(text):
    assert RUNS.read(text) == ()


def test_the_tools_the_policy_missed_are_added_in_their_clause():
    d, read = RUNS.add(_decision(['motor_status', 'system_health'],
                                 {'motor_status': 0, 'system_health': 2}),
                       'esc, imu and health status')
    assert read is not None and read.added == ('attitude_imu',)
    assert d.tools == ['motor_status', 'system_health', 'attitude_imu']
    assert d.clause_index['attitude_imu'] == 1
    assert d.evidence['attitude_imu'][0].source == 'rule'


def test_nothing_is_dropped_and_nothing_added_twice():
    d, read = RUNS.add(_decision(['takeoff', 'arm_motors', 'set_altitude']), 'arm takeoff hover')
    assert d.tools == ['takeoff', 'arm_motors', 'set_altitude', 'hold_position']
    assert read is not None and read.added == ('hold_position',)


def test_a_critical_tool_is_never_added():
    d, read = RUNS.add(_decision([]), 'arm takeoff hover')
    assert 'arm_motors' not in d.tools and d.tools == ['takeoff', 'hold_position']
    assert not d.abstained  # a run of catalog words is for the vehicle


def test_a_request_that_is_no_run_is_unchanged():
    before = _decision(['rgb_camera'])
    d, read = RUNS.add(before, 'take a picture of the barn')
    assert read is None and d is before


@pytest.mark.parametrize('policy', ['lcr', 'cdbv3'])
def test_the_router_adds_them_for_every_policy(fake_router, policy):
    result = fake_router.route('esc, imu and health status', policy=policy)
    assert {'motor_status', 'attitude_imu', 'system_health'} <= set(result.tools)
