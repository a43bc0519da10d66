""""Check the battery before takeoff": the takeoff is when, not what (routing/preflight.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.preflight import drop_preflight_departure
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))


@pytest.mark.parametrize('text, index, expected', [
    ('check the battery and the compass before takeoff',
     {'battery_status': 0, 'compass_heading': 1, 'takeoff': 2},
     ['battery_status', 'compass_heading']),
    ("what's the GPS fix like before we launch", {'gps_position': 0, 'takeoff': 1},
     ['gps_position']),
    ('before the flight, check for errors', {'takeoff': 0, 'system_health': 1},
     ['system_health']),
])
def test_a_check_before_the_departure_orders_no_departure(text, index, expected):
    d, drops = drop_preflight_departure(rule_decision(index), text, CATALOG)
    assert d.tools == expected and [dr.tools for dr in drops] == [('takeoff',)]


def test_a_check_before_arming_orders_no_arming():
    d, drops = drop_preflight_departure(
        rule_decision({'system_health': 0, 'gps_position': 1, 'arm_motors': 2}),
        'check for faults and the satellites before arming', CATALOG)
    assert d.tools == ['system_health', 'gps_position'] and drops




@pytest.mark.parametrize('text, index', [
    # an order beside the check: the take-off goes with it
    ('arm the motors before takeoff', {'arm_motors': 0, 'takeoff': 1}),
    # the departure is ordered, and "before" times it
    ('take off before the rain comes', {'takeoff': 0}),
    ('check the battery before the storm', {'battery_status': 0, 'weather_sensor': 1}),
    # the takeoff was chosen for the check's own clause
    ('check battery and take off before noon', {'battery_status': 0, 'takeoff': 1}),
])
def test_anything_else_keeps_its_tools(text, index):
    d, drops = drop_preflight_departure(rule_decision(index), text, CATALOG)
    assert not drops and d.tools == list(index)
