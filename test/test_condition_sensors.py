"""A condition is watched by the sensor that reads it (routing/condition_sensors.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.condition_sensors import (add_joined_sensors, drop_condition_orders,
                                                   drop_extra_readings)
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))



@pytest.mark.parametrize('text, index, kept, dropped', [
    ("once you're at 100 ft snap a photo",
     {'rgb_camera': 1, 'altitude_sensor': 0, 'gps_position': 0},
     ['rgb_camera', 'altitude_sensor'], ('gps_position',)),
    ('if any ESC goes over 80 degrees, land immediately',
     {'motor_status': 0, 'land': 1, 'attitude_imu': 0}, ['motor_status', 'land'],
     ('attitude_imu',)),
    ('hold there if someone gets closer than 4 m',
     {'hold_position': 0, 'object_detector': 1, 'obstacle_proximity': 1},
     ['hold_position', 'object_detector'], ('obstacle_proximity',)),
])
def test_the_conditions_other_readings_are_dropped(text, index, kept, dropped):
    d, fact = drop_extra_readings(rule_decision(index), text, CATALOG)
    assert d.tools == kept and fact is not None and fact.dropped == dropped


@pytest.mark.parametrize('text, index', [
    # a camera stays: an image can be how the detection is made
    ("if there's a fox in the scrub, film it", {'object_detector': 0, 'thermal_camera': 0,
                                                 'video_recorder': 1}),
    # the grammar refuses the condition: nothing is dropped
    ('if it gets weird, land', {'system_health': 0, 'attitude_imu': 0, 'land': 1}),
    # the condition's sensor was not chosen there
    ("once you're at 100 ft snap a photo", {'rgb_camera': 1, 'gps_position': 0,
                                            'vehicle_state': 0}),
    # a reading asked in an action clause is no extra
    ('check the gps and land when the battery is below 20%',
     {'gps_position': 0, 'battery_status': 1, 'land': 0}),
])
def test_anything_else_is_unchanged(text, index):
    before = rule_decision(index)
    d, fact = drop_extra_readings(before, text, CATALOG)
    assert fact is None and d.tools == before.tools


@pytest.mark.parametrize('text, index, dropped', [
    # the condition's clause chose the order that would set what it watches
    ('when it touches down, stop filming and disarm',
     {'vehicle_state': 0, 'land': 0, 'video_recorder': 1, 'disarm_motors': 2}, ('land',)),
    ('start the spotlight once above 40 m',
     {'spotlight': 0, 'altitude_sensor': 1, 'set_altitude': 1}, ('set_altitude',)),
    ('come home as soon as the survey is complete',
     {'return_to_home': 0, 'vehicle_state': 1, 'execute_mission': 1}, ('execute_mission',)),
    # the end of another order ("until"), even with no sensor chosen to watch it
    ('record until we land', {'video_recorder': 0, 'land': 1}, ('land',)),
])
def test_a_condition_is_watched_not_ordered(text, index, dropped):
    d, fact = drop_condition_orders(rule_decision(index), text, CATALOG)
    assert fact is not None and fact.dropped == dropped
    assert set(d.tools) == set(index) - set(dropped)


@pytest.mark.parametrize('text, index', [
    # an action clause orders it in its own words: lcr's clause is not the order's
    ('if it gets higher than 30 m bring it back down to 20',
     {'altitude_sensor': 0, 'set_altitude': 0}),
    ('run the orchard survey and come home when the survey is done',
     {'execute_mission': 1, 'return_to_home': 1, 'vehicle_state': 1}),
    # an actuator that sets nothing the condition reads stays
    ('once it is in the air play the greeting', {'vehicle_state': 0, 'speaker_broadcast': 0}),
    # the whole request read as a condition: its order is in it
    ('cap speed at 10 knots', {'set_speed': 0, 'velocity_estimate': 0}),
    # the condition's sensor was not chosen: nothing is dropped
    ('when it touches down, disarm', {'land': 0, 'disarm_motors': 1}),
])
def test_orders_in_their_own_words_stay(text, index):
    before = rule_decision(index)
    d, fact = drop_condition_orders(before, text, CATALOG)
    assert fact is None and d.tools == before.tools


@pytest.mark.parametrize('text, index, added', [
    # every reading of a condition joined by or/and gets its sensor (dev: 9 of 9 so written)
    ('if wind > 20 knots or battery < 30% come home',
     {'wind_estimate': 0, 'return_to_home': 1}, ('battery_status',)),
    ('if the drone leaves the fence or loses link, kill it', {'emergency_stop': 1},
     ('geofence_monitor', 'link_quality')),
    # a half the grammar refuses adds nothing; the one it reads still gets its sensor (stop 50)
    ('sats < 8 or compass off: hold and warn over the speaker',
     {'compass_heading': 0, 'hold_position': 1, 'speaker_broadcast': 2}, ('gps_position',)),
])
def test_each_reading_of_a_joined_condition_gets_its_sensor(text, index, added):
    d, fact = add_joined_sensors(rule_decision(index), text, CATALOG)
    assert fact is not None and fact.added == added
    assert d.tools == list(index) + list(added) and all(d.clause_index[s] == 0 for s in added)


@pytest.mark.parametrize('text, index', [
    # a half that is no reading, one reading, a negated clause, an empty answer
    ('if the battery or the radio gets marginal, come home', {'return_to_home': 1}),
    ('if the wind goes over 10 m/s, land', {'land': 1}),
    ("if the wind isn't over 10 m/s or the battery isn't low, take off", {'takeoff': 1}),
    ('if wind > 20 knots or battery < 30% come home', {}),
])
def test_no_joined_reading_adds_nothing(text, index):
    before = rule_decision(index)
    d, fact = add_joined_sensors(before, text, CATALOG)
    assert fact is None and d.tools == before.tools
