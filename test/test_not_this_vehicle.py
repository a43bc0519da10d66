"""Fleets and raw stick input are outside one vehicle's catalog (routing/not_this_vehicle.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.not_this_vehicle import drop_outside_requests, outside_one_vehicle
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index={t: 0 for t in tools})


@pytest.mark.parametrize('text, why', [
    ('land every drone in the fleet', 'several vehicles or a fleet'),
    ('show the fleet status', 'several vehicles or a fleet'),
    ('send both drones to the quarry', 'several vehicles or a fleet'),
    ('have drone A follow drone B', 'several vehicles or a fleet'),
    ('drones 2 and 3 return home', 'several vehicles or a fleet'),
    ('vehicle 1 and vehicle 2 land', 'several vehicles or a fleet'),
    ('all the drones hold position', 'several vehicles or a fleet'),
    ('launch two drones over the lake', 'several vehicles or a fleet'),
    ('dispatch the nearest free drone to the fire', 'several vehicles or a fleet'),
    ('send the backup uav to cover field 2', 'several vehicles or a fleet'),
    ('yaw stick hard right', 'raw stick input'),
    ('left stick full up', 'raw stick input'),
    ('throttle stick to 60%', 'raw stick input'),
    ('throttle 60%', 'raw stick input'),
    ('set throttle to 40 percent', 'raw stick input'),
])
def test_fleets_and_sticks_are_named(text, why):
    found = outside_one_vehicle(text)
    assert found is not None and found[0] == why


@pytest.mark.parametrize('text', [
    'POSHOLD mode, hands off the sticks',
    'stick with the white pickup',
    'broadcast "all drones must land now"',  # the message's words
    'fly to waypoint 2 with drone 1',  # one vehicle
    'the other drone is in the way, hold',
    'no drones allowed here, turn back',
    'move the drone a bit left, then drone i mean hover',  # articles, not ids
    'drone 1 go to waypoint 1 then drone 1 land',  # the same vehicle twice
    'take a photo of the field',
    'throttle back to 5 m/s',  # a speed, not a channel value
    'detect every vehicle in both lots',  # vehicles to look for
    'count all vehicles on the bridge',
    'count the idle vehicles in the depot',  # vehicles to look for, not drones of a fleet
])
def test_one_vehicle_requests_are_not_outside(text):
    assert outside_one_vehicle(text) is None


def test_a_fleet_request_is_emptied_with_a_note():
    d, drop = drop_outside_requests(_decision(['land']), 'land every drone in the fleet',
                                    CATALOG)
    assert drop is not None and drop.tools == ('land',)
    assert d.tools == [] and d.scores == [] and d.abstained
    assert 'land dropped' in d.note and 'fleet' in d.note


def test_a_request_for_this_vehicle_is_unchanged():
    before = _decision(['land'])
    d, drop = drop_outside_requests(before, 'land now', CATALOG)
    assert drop is None and d is before


def test_an_empty_answer_stays_as_it_was():
    before = _decision([])
    d, drop = drop_outside_requests(before, 'land every drone in the fleet', CATALOG)
    assert drop is None and d is before
