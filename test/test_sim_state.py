"""The simulated vehicle's state machine, without ROS."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tool_router.common.conditions import HOME, decode_reading, distance_m
from tool_router.sim.vehicle import (ARGUMENTS, SENSORS, SimVehicle, local_pose, parameter_problem,
                                     tool_names)

WAYPOINT = {'lat': 47.3985, 'lon': 8.5466}  # ~110 m from home, inside the 200 m fence


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
    assert vehicle.command('goto_waypoint', args=WAYPOINT).ok
    assert vehicle.command('land').ok
    landed = vehicle.snapshot()
    assert landed['phase'] == 'landed' and landed['battery_pct'] < 90.0  # the flight drained it
    clock[0] += 100.0
    assert vehicle.snapshot()['battery_pct'] == landed['battery_pct']  # no drain on the ground
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
    ([], ('goto_waypoint', WAYPOINT), 'in the air'),
    ([], 'area_mapping', 'in the air'),
    ([], 'disarm_motors', 'already disarmed'),
])
def test_illegal_transitions_are_refused(vehicle, setup, tool, words):
    for step in setup:
        assert vehicle.command(step).ok, step
    before = vehicle.snapshot()
    tool, args = tool if isinstance(tool, tuple) else (tool, None)
    answer = vehicle.command(tool, args=args)
    assert not answer.ok and answer.failure_mode == 'vehicle_refused'
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
    assert vehicle.command('spotlight', args={'on': False}).message == 'spotlight off'
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


def airborne(vehicle, **takeoff):
    assert vehicle.command('arm_motors').ok
    answer = vehicle.command('takeoff', args=takeoff)
    assert answer.ok, answer
    return answer


def test_takeoff_climbs_to_the_height_asked(vehicle):
    answer = airborne(vehicle, height_m=20.0)
    assert answer.message == 'took off, holding at 20.0 m'
    assert vehicle.snapshot()['altitude_m'] == 20.0


def test_takeoff_without_a_height_says_it_used_the_default(vehicle):
    answer = airborne(vehicle)
    assert vehicle.snapshot()['altitude_m'] == 12.0 and 'default take-off height' in answer.message


def test_set_altitude_goes_to_the_altitude_asked_and_needs_one(vehicle):
    airborne(vehicle)
    answer = vehicle.command('set_altitude')
    assert (answer.ok, answer.failure_mode) == (False, 'missing_argument')
    assert 'target altitude' in answer.message and vehicle.snapshot()['altitude_m'] == 12.0
    answer = vehicle.command('set_altitude', args={'altitude_m': 35.0})
    assert answer.ok and answer.message == 'climbed from 12.0 m to 35.0 m'
    assert vehicle.command('set_altitude', args={'altitude_m': 8.0}).message == \
        'descended from 35.0 m to 8.0 m'
    assert vehicle.snapshot()['altitude_m'] == 8.0


def test_goto_reaches_the_coordinates_and_drains_the_flight_time(vehicle):
    airborne(vehicle, height_m=20.0)
    answer = vehicle.command('goto_waypoint', args={**WAYPOINT, 'altitude_m': 30.0,
                                                    'speed_mps': 4.0})
    assert answer.ok, answer
    state = vehicle.snapshot()
    assert (state['lat'], state['lon'], state['altitude_m']) == (47.3985, 8.5466, 30.0)
    flown = (distance_m(*HOME, 47.3985, 8.5466) ** 2 + 10.0 ** 2) ** 0.5
    assert f'flew {flown:.0f} m at 4.0 m/s in {flown / 4.0:.0f} s' in answer.message
    assert state['battery_pct'] == pytest.approx(100.0 - flown / 4.0 * 0.1, abs=0.01)
    gps = decode_reading(vehicle.command('gps_position').message)
    assert (gps['lat'], gps['lon']) == (47.3985, 8.5466)


def test_heading_speed_gimbal_orbit_and_hold_take_their_values(vehicle):
    airborne(vehicle)
    assert vehicle.command('set_heading', args={'heading_deg': 270.0}).message == \
        'turned to heading 270 deg'
    assert vehicle.snapshot()['heading_deg'] == 270.0
    assert vehicle.command('set_speed', args={'speed_mps': 7.5}).ok
    assert vehicle.snapshot()['cruise_speed_mps'] == 7.5
    assert vehicle.command('gimbal_control', args={'pitch_deg': -90.0}).ok
    assert vehicle.snapshot()['gimbal_pitch_deg'] == -90.0
    assert 'no pitch given' in vehicle.command('gimbal_control').message  # nothing guessed
    answer = vehicle.command('orbit_point', args={'radius_m': 30.0, 'duration_s': 60.0})
    assert answer.ok and '30 m radius' in answer.message and 'for 60 s' in answer.message
    assert vehicle.snapshot()['mode'] == 'ORBIT'
    answer = vehicle.command('hold_position', args={'duration_s': 15.0})
    assert answer.ok and answer.message.endswith('for 15 s')
    assert vehicle.snapshot()['activity_left_s'] == 15.0


def test_a_timed_orbit_ends_after_its_duration(vehicle, clock):
    airborne(vehicle)
    assert vehicle.command('orbit_point', args={'duration_s': 60.0}).ok
    clock[0] += 59.0
    assert vehicle.snapshot()['mode'] == 'ORBIT'
    clock[0] += 2.0
    state = vehicle.snapshot()
    assert (state['mode'], state['speed_mps'], state['activity']) == ('LOITER', 0.0, '')


@pytest.mark.parametrize('tool, args, mode, words', [
    ('takeoff', {'height_m': 500.0}, 'outside_limits', '1-120 m'),
    ('takeoff', {'height_m': 0.2}, 'outside_limits', '1-120 m'),
    ('set_altitude', {'altitude_m': 121.0}, 'outside_limits', 'above the launch point'),
    ('goto_waypoint', {'lat': 47.41, 'lon': 8.56}, 'outside_limits', 'geofence'),
    ('goto_waypoint', {'lat': 47.3985}, 'missing_argument', 'coordinates'),
    ('goto_waypoint', {**WAYPOINT, 'speed_mps': 40.0}, 'outside_limits', '0-15 m/s'),
    ('set_speed', {}, 'missing_argument', 'a speed'),
    ('set_heading', {}, 'missing_argument', 'a heading'),
    ('set_heading', {'heading_deg': float('nan')}, 'bad_argument', 'finite'),
    ('orbit_point', {'radius_m': 1.0}, 'outside_limits', '5-100 m'),
    ('hold_position', {'duration_s': -3.0}, 'outside_limits', 'duration'),
    ('gimbal_control', {'pitch_deg': 60.0}, 'outside_limits', '-90..30'),
    ('land', {'altitude_m': 3.0}, 'bad_argument', 'does not take altitude_m'),
    ('battery_status', {'on': True}, 'bad_argument', 'takes no arguments'),
])
def test_what_the_vehicle_cannot_do_is_refused_with_the_reason(vehicle, tool, args, mode, words):
    airborne(vehicle)
    before = vehicle.snapshot()
    answer = vehicle.command(tool, args=args)
    assert (answer.ok, answer.failure_mode) == (False, mode), answer
    assert answer.message.startswith('refused:') and words in answer.message, answer.message
    assert {k: v for k, v in vehicle.snapshot().items() if k != 'commands'} == \
        {k: v for k, v in before.items() if k != 'commands'}


def test_every_tool_with_arguments_is_a_served_tool():
    assert set(ARGUMENTS) <= set(tool_names())


def test_time_left_is_the_charge_over_the_drain_rate(clock):
    """27.9 % at 0.25 %/s lasts 111.6 s (it read '~7 min left' before)."""
    vehicle = SimVehicle(drain_pct_per_s=0.25, battery_pct=27.9, clock=lambda: clock[0])
    airborne(vehicle)
    message = vehicle.command('battery_status').message
    assert '~1.9 min (112 s) of flight left at 0.25 %/s' in message, message
    assert decode_reading(message)['flight_time_left_s'] == 111.6
    assert vehicle.command('spotlight', True).ok  # the spotlight drains 0.005 %/s more
    assert decode_reading(vehicle.command('battery_status').message)['flight_time_left_s'] == \
        pytest.approx(27.9 / 0.255, abs=0.05)
    assert 'once airborne' not in message
    on_ground = SimVehicle(drain_pct_per_s=0.5, battery_pct=30.0)
    assert '~1.0 min (60 s) of flight left at 0.5 %/s once airborne' in \
        on_ground.command('battery_status').message


def test_runtime_parameters_change_the_state_and_invalid_ones_are_refused(vehicle, clock):
    airborne(vehicle)
    clock[0] += 10.0
    vehicle.set_parameter('battery_pct', 42.0)
    assert decode_reading(vehicle.command('battery_status').message)['battery_pct'] == 42.0
    vehicle.set_parameter('battery_drain_pct_per_s', 1.0)
    clock[0] += 2.0
    assert vehicle.snapshot()['battery_pct'] == pytest.approx(40.0)
    for name, value in (('battery_pct', 120.0), ('battery_pct', float('nan')),
                        ('battery_drain_pct_per_s', -1.0), ('takeoff_altitude_m', 500.0),
                        ('battery_pct', 'full'), ('prefix', 1.0)):
        assert parameter_problem(name, value), (name, value)
        with pytest.raises(ValueError):
            vehicle.set_parameter(name, value)
    assert vehicle.snapshot()['battery_pct'] == pytest.approx(40.0)


def test_local_pose_is_east_north_up_from_home(vehicle):
    airborne(vehicle, height_m=20.0)
    assert vehicle.command('goto_waypoint', args=WAYPOINT).ok
    assert vehicle.command('set_heading', args={'heading_deg': 0.0}).ok  # north
    pose = local_pose(vehicle.state)
    north = distance_m(HOME[0], HOME[1], WAYPOINT['lat'], HOME[1])
    east = distance_m(HOME[0], HOME[1], HOME[0], WAYPOINT['lon'])
    assert (pose.x, pose.y, pose.z) == (pytest.approx(east, rel=1e-3),
                                        pytest.approx(north, rel=1e-3), 20.0)
    assert pose.yaw_rad == pytest.approx(3.14159265 / 2)
    assert vehicle.command('set_heading', args={'heading_deg': 90.0}).ok  # east
    assert local_pose(vehicle.state).yaw_rad == pytest.approx(0.0)


VALUES = {
    'height_m': st.floats(-50, 500), 'altitude_m': st.floats(-50, 500),
    'heading_deg': st.floats(-720, 720), 'speed_mps': st.floats(-5, 50),
    'lat': st.floats(47.39, 47.41), 'lon': st.floats(8.535, 8.555),
    'pitch_deg': st.floats(-180, 180), 'radius_m': st.floats(-10, 300),
    'duration_s': st.floats(-10, 7200), 'on': st.booleans(),
}


@settings(max_examples=300, deadline=None)
@given(data=st.data(), tool=st.sampled_from(sorted(ARGUMENTS)), airborne_first=st.booleans())
def test_any_arguments_either_act_within_the_limits_or_change_nothing(data, tool,
                                                                      airborne_first):
    vehicle = SimVehicle(clock=lambda: 0.0)
    if airborne_first:
        airborne(vehicle)
    required, optional = ARGUMENTS[tool]
    names = data.draw(st.sets(st.sampled_from(required + optional)))
    args = {name: data.draw(VALUES[name]) for name in names}
    before = vehicle.snapshot()
    answer = vehicle.command(tool, args=args)
    after = vehicle.snapshot()
    if not answer.ok:
        assert answer.failure_mode and answer.message.startswith('refused:')
        assert after == before
        return
    lim = vehicle.limits
    assert 0.0 <= after['altitude_m'] <= lim.max_altitude_m
    assert distance_m(after['lat'], after['lon'], *HOME) <= lim.fence_radius_m + 1e-6
    assert 0.0 <= after['speed_mps'] <= lim.max_speed_mps
    assert 0.0 <= after['heading_deg'] < 360.0
    assert lim.gimbal_pitch_deg[0] <= after['gimbal_pitch_deg'] <= lim.gimbal_pitch_deg[1]
    for name in set(required) - set(args):
        raise AssertionError(f'{tool} acted without {name}')


def test_the_arming_state_is_a_reading_a_condition_can_watch(vehicle):
    from tool_router.common.conditions import Predicate, parse_condition
    once_armed = parse_condition('once armed')
    assert isinstance(once_armed, Predicate)
    state = decode_reading(vehicle.command('vehicle_state').message)
    assert state['armed'] is False and not once_armed.holds(state)
    assert vehicle.command('arm_motors').ok
    state = decode_reading(vehicle.command('vehicle_state').message)
    assert state['armed'] is True and once_armed.holds(state)
