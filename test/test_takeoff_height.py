"""A climb joined to a takeoff by "and" is the takeoff's height (routing/takeoff_height.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.takeoff_height import climb_is_the_takeoff_height
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))


@pytest.mark.parametrize('text, index, expected', [
    ('lift off and climb to twenty meters', {'takeoff': 0, 'set_altitude': 1}, ['takeoff']),
    ('take off and climb to 30m then go forward 50m then land',
     {'takeoff': 0, 'set_altitude': 1, 'goto_waypoint': 2, 'land': 3},
     ['takeoff', 'goto_waypoint', 'land']),
    ('launch and then go up to about 15 m', {'takeoff': 0, 'set_altitude': 1}, ['takeoff']),
])
def test_a_climb_joined_to_the_takeoff_is_its_height(text, index, expected):
    d, fact = climb_is_the_takeoff_height(rule_decision(index), text, CATALOG)
    assert fact is not None and d.tools == expected and 'set_altitude dropped' in d.note


@pytest.mark.parametrize('text, index', [
    # a step of its own after the takeoff's: dev writes set_altitude
    ('take off, climb to 120 ft, face west', {'takeoff': 0, 'set_altitude': 1,
                                             'set_heading': 2}),
    ('1) take off 2) climb to 40 m', {'takeoff': 0, 'set_altitude': 1}),
    # the takeoff has its height; the climb is a second one
    ('take off to 20 m and climb to 40 m', {'takeoff': 0, 'set_altitude': 1}),
    # set_altitude answers another clause than the climb
    ('take off and climb to 30 m, then descend to 10 m',
     {'takeoff': 0, 'set_altitude': 2}),
])
def test_a_climb_of_its_own_stays(text, index):
    d, fact = climb_is_the_takeoff_height(rule_decision(index), text, CATALOG)
    assert fact is None and d.tools == list(index)
