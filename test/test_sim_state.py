"""The simulated vehicle's state machine, without ROS."""
from __future__ import annotations

import pytest

from tool_router.sim.vehicle import SENSORS, SimVehicle, tool_names


@pytest.fixture
def clock():
    return [0.0]


@pytest.fixture
def vehicle(clock):
    return SimVehicle(takeoff_altitude_m=12.0, drain_pct_per_s=0.1, clock=lambda: clock[0])


def test_serves_every_catalog_tool(catalog):
    assert set(tool_names()) == set(catalog.names)
    assert set(SENSORS) == {t.name for t in catalog if t.kind.value == 'sensor'}


def test_normal_flight(vehicle, clock):
    assert vehicle.command('arm_motors').ok
    answer = vehicle.command('takeoff')
    assert answer.ok and '12.0 m' in answer.message
    assert vehicle.snapshot()['phase'] == 'airborne'
    clock[0] += 100.0
    assert vehicle.snapshot()['battery_pct'] == pytest.approx(90.0)
    assert vehicle.command('goto_waypoint').ok
    assert vehicle.command('land').ok
    assert vehicle.snapshot()['phase'] == 'landed'
    clock[0] += 100.0
    assert vehicle.snapshot()['battery_pct'] == pytest.approx(90.0)  # no drain on the ground
    assert vehicle.command('disarm_motors').ok
    assert vehicle.snapshot()['phase'] == 'disarmed'


@pytest.mark.parametrize('setup, tool, words', [
    ([], 'takeoff', 'disarmed'),
    (['arm_motors', 'takeoff'], 'disarm_motors', 'in the air'),
    ([], 'land', 'on the ground'),
    (['arm_motors'], 'land', 'on the ground'),
    (['arm_motors', 'takeoff', 'land'], 'land', 'on the ground'),
    (['arm_motors'], 'arm_motors', 'already armed'),
    (['arm_motors', 'takeoff'], 'takeoff', 'already airborne'),
    (['payload_release'], 'payload_release', 'no payload'),
    ([], 'goto_waypoint', 'in the air'),
    ([], 'area_mapping', 'in the air'),
    ([], 'disarm_motors', 'already disarmed'),
])
def test_illegal_transitions_are_refused(vehicle, setup, tool, words):
    for step in setup:
        assert vehicle.command(step).ok, step
    before = vehicle.snapshot()
    answer = vehicle.command(tool)
    assert not answer.ok
    assert answer.message.startswith('refused:') and words in answer.message
    after = vehicle.snapshot()
    assert {k: v for k, v in after.items() if k != 'battery_pct'} == \
        {k: v for k, v in before.items() if k != 'battery_pct'}


def test_flags_and_sensors(vehicle):
    assert vehicle.command('spotlight', True).message == 'spotlight on'
    assert vehicle.command('spotlight', True).message == 'spotlight already on'
    assert vehicle.command('video_recorder', True).ok and vehicle.snapshot()['recording']
    assert vehicle.command('video_recorder', False).ok and not vehicle.snapshot()['recording']
    reading = vehicle.command('battery_status').message
    assert reading.startswith('battery 100.0 %') and ' V' in reading
    assert 'phase disarmed' in vehicle.command('vehicle_state').message
    assert vehicle.command('unknown_tool').ok is False


def test_emergency_stop_in_flight(vehicle):
    for step in ('arm_motors', 'takeoff', 'video_recorder'):
        assert vehicle.command(step).ok
    assert 'fell' in vehicle.command('emergency_stop').message
    state = vehicle.snapshot()
    assert (state['phase'], state['terminated'], state['recording']) == ('disarmed', True, False)


def test_arming_refused_on_low_battery(vehicle):
    vehicle.state.battery_pct = 5.0
    answer = vehicle.command('arm_motors')
    assert not answer.ok and 'battery' in answer.message
