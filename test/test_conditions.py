"""The condition grammar: what parses (and into what), what is refused and why. No ROS."""
from __future__ import annotations

import random

import pytest

from tool_router.common.catalog import Kind
from tool_router.common.conditions import (
    CLOCK, HOME, QUANTITIES, STATES, Predicate, Unreadable, condition_notes, decode_reading,
    distance_m, encode_reading, joined_parts, parse_condition)
from tool_router.sim.vehicle import READINGS, SENSORS, SimVehicle

PARSES = [
    # text, context sensors, sensor, field, op, threshold
    ('when the battery drops below 20%', (), 'battery_status', 'battery_pct', '<', 20.0),
    ('when it drops below 25%', ('battery_status',), 'battery_status', 'battery_pct', '<', 25.0),
    ("once we're under 30 percent", ('battery_status',), 'battery_status', 'battery_pct', '<',
     30.0),
    ('when the battery reaches 30%', (), 'battery_status', 'battery_pct', '<=', 30.0),
    ('when the battery is at most 40 %', (), 'battery_status', 'battery_pct', '<=', 40.0),
    ('when you reach 50 m', (), 'altitude_sensor', 'altitude_m', '>=', 50.0),
    ("once we're above 100 ft", (), 'altitude_sensor', 'altitude_m', '>', 30.48),
    ('if the altitude drops below 10 m', (), 'altitude_sensor', 'altitude_m', '<', 10.0),
    ('when the speed drops below 2 m/s', (), 'velocity_estimate', 'speed_mps', '<', 2.0),
    ('if we go faster than 54 km/h', (), 'velocity_estimate', 'speed_mps', '>', 15.0),
    ('if the wind picks up above 12 m/s', (), 'wind_estimate', 'wind_mps', '>', 12.0),
    ('if the wind speed is at least 10 m/s', (), 'wind_estimate', 'wind_mps', '>=', 10.0),
    ('when the drone is 200 ft above ground', (), 'altitude_sensor', 'altitude_m', '>=', 60.96),
    ('once airborne', (), 'vehicle_state', 'on_ground', '==', False),
    ('when gusts exceed 15 knots', (), 'wind_estimate', 'gust_mps', '>', 7.71666),
    ('if anything comes within 2 m of the props', (), 'obstacle_proximity', 'nearest_m', '<',
     2.0),
    ('if the surface temperature exceeds 80 °C', (), 'thermal_camera', 'max_temp_c', '>', 80.0),
    ('if the temperature drops below 32 °F', (), 'weather_sensor', 'air_temp_c', '<', 0.0),
    # a comma before three digits separates thousands; any other comma is a decimal one
    ('when the altitude exceeds 1,000 ft', (), 'altitude_sensor', 'altitude_m', '>', 304.8),
    ('when the battery drops below 25,5 %', (), 'battery_status', 'battery_pct', '<', 25.5),
    ('when humidity goes above 90%', (), 'weather_sensor', 'humidity_pct', '>', 90.0),
    ('when any motor goes above 90 °C', (), 'motor_status', 'esc_temp_c', '>', 90.0),
    ('if the signal drops below -80 dBm', (), 'link_quality', 'rssi_dbm', '<', -80.0),
    ('if packet loss exceeds 5%', (), 'link_quality', 'packet_loss_pct', '>', 5.0),
    ('if the CO exceeds 50 ppm', (), 'air_quality_sensor', 'co_ppm', '>', 50.0),
    ('if the NDVI drops below 0.4', (), 'multispectral_camera', 'ndvi', '<', 0.4),
    ('when we get within 50 m of the no-fly zone', (), 'geofence_monitor', 'margin_m', '<', 50.0),
    ("once you're within 100 m of home", (), 'gps_position', 'distance_m', '<=', 100.0),
    ('when we are 30 m from 47.398, 8.546', (), 'gps_position', 'distance_m', '<=', 30.0),
    ('if we lose the link', (), 'link_quality', 'link_lost', '==', True),
    # a symbol at the end of a distance's head is its comparison, "or equal" kept (stop 50)
    ('if the distance is >= 500 m from home', (), 'gps_position', 'distance_m', '>=', 500.0),
    ('if dist from home ≥ 300 m', (), 'gps_position', 'distance_m', '>=', 300.0),
    # the satellites the GPS receiver uses: a count without a unit (stop 50)
    ('if sats < 8', (), 'gps_position', 'satellites', '<', 8.0),
    ('if fewer than 6 satellites', (), 'gps_position', 'satellites', '<', 6.0),
    ('when the satellite count drops below 10', (), 'gps_position', 'satellites', '<', 10.0),
    ('if we leave the allowed area', (), 'geofence_monitor', 'inside', '==', False),
    ('once the survey is done', (), 'vehicle_state', 'mission', '==', 'finished'),
    ('once the mission is finished', (), 'vehicle_state', 'mission', '==', 'finished'),
    ("once it's down on the ground", (), 'vehicle_state', 'on_ground', '==', True),
    ('when it has landed', (), 'vehicle_state', 'on_ground', '==', True),
    # the arming state the autopilot reports (HEARTBEAT; the simulator's vehicle_state)
    ('once armed', (), 'vehicle_state', 'armed', '==', True),
    ("if it's disarmed", (), 'vehicle_state', 'armed', '==', False),
    ('if you see a person', (), 'object_detector', 'persons', '>=', 1.0),
    ('when a car shows up', (), 'object_detector', 'vehicles', '>=', 1.0),
    ('after 30 seconds', (), CLOCK, 'elapsed_s', '>=', 30.0),
    ('in 2 minutes', (), CLOCK, 'elapsed_s', '>=', 120.0),
    ('at 14:30', (), CLOCK, 'clock_s', '>=', 52200.0),
]

REFUSED = [
    # text, context sensors, words the reason must contain
    ('if it gets too windy', (), 'no threshold'),
    ('if the charge gets low', (), 'no threshold'),
    ('if the pressure falls quickly', (), 'no threshold'),
    ('when the battery is below 20 m', (), "unit 'm' does not fit battery"),
    ('when it drops below 25%', (), 'no sensor of this request measures percent'),
    ("when it's below 25%", ('battery_status', 'weather_sensor'), 'ambiguous quantity'),
    ('if the battery drops below 20% and the wind exceeds 10 m/s', (), 'one condition'),
    ('unless the battery is above 30%', (), '"unless" conditions are not executed'),
    ('until the battery is below 30%', (), '"until" conditions are not executed'),
    ('if the battery is not above 20%', (), 'negated'),
    ('when the heading reaches 270', (), 'angles are not watchable'),
    ('when the altitude exceeds 400 m MSL', (), 'above sea level (MSL) is not compared'),
    ('once we are 1,300 ft above sea level', (), 'above sea level (MSL) is not compared'),
    ('when the roll exceeds 30 degrees', (), 'angles are not watchable'),
    ('if the battery drops below 120%', (), 'outside 0-100'),
    ('when the altitude goes above 400', (), 'not a plausible altitude in m: write the unit'),
    ('when we are 30 m from the barn', (), "unknown place 'the barn'"),
    ('if the battery goes below 20% or 10%', (), 'one condition'),
    ('', (), 'empty'),
    ('when the moon is full', (), 'no known quantity'),
]


@pytest.mark.parametrize('text,ctx,sensor,field,op,threshold', PARSES)
def test_parses(text, ctx, sensor, field, op, threshold):
    got = parse_condition(text, ctx)
    assert isinstance(got, Predicate), got
    assert (got.sensor, got.field, got.op) == (sensor, field, op), got.describe()
    if isinstance(threshold, float):
        assert got.threshold == pytest.approx(threshold, abs=1e-3)
    else:
        assert got.threshold == threshold
    assert got.text == text


@pytest.mark.parametrize('text,ctx,words', REFUSED)
def test_refused_with_reason(text, ctx, words):
    got = parse_condition(text, ctx)
    assert isinstance(got, Unreadable), got
    assert words in got.reason


def test_every_quantity_and_state_reads_a_field_its_simulated_sensor_reports():
    vehicle = SimVehicle()
    for q in QUANTITIES:
        assert q.field in READINGS[q.sensor](vehicle.state), q
    for _, sensor, field, _ in STATES:
        assert field in READINGS[sensor](vehicle.state)


def test_simulator_serves_a_reading_for_every_sensor(catalog):
    sensors = {t.name for t in catalog if t.kind is Kind.SENSOR}
    assert set(READINGS) == set(SENSORS) == sensors
    vehicle = SimVehicle()
    for name in sorted(sensors):
        answer = vehicle.command(name)
        reading = decode_reading(answer.message)
        assert answer.ok and reading, name
        assert answer.message.splitlines()[0] == SENSORS[name](vehicle.state)


def test_reading_round_trip_and_absence():
    assert decode_reading(encode_reading('battery 20 %', {'battery_pct': 20.0})) == \
        {'battery_pct': 20.0}
    assert decode_reading('photo captured') is None
    assert decode_reading('x\nreading: not json') is None


def test_predicates_evaluate_readings_including_unit_conversion_and_distance():
    low = parse_condition('when the battery drops below 25%')
    assert isinstance(low, Predicate)
    assert low.holds({'battery_pct': 24.9}) and not low.holds({'battery_pct': 25.0})
    high = parse_condition("once we're above 100 ft")
    assert isinstance(high, Predicate)
    assert high.holds({'altitude_m': 31.0}) and not high.holds({'altitude_m': 30.0})
    near = parse_condition("once you're within 100 m of home")
    assert isinstance(near, Predicate) and near.target == HOME
    assert near.holds({'lat': HOME[0], 'lon': HOME[1] + 0.0005})  # ~38 m east
    assert not near.holds({'lat': HOME[0] + 0.01, 'lon': HOME[1]})  # ~1.1 km north
    with pytest.raises(KeyError):
        low.holds({'voltage_v': 14.0})


def test_distance_is_symmetric_and_zero_on_the_point():
    rng = random.Random(7)
    for _ in range(50):
        a = (rng.uniform(-80, 80), rng.uniform(-170, 170))
        b = (rng.uniform(-80, 80), rng.uniform(-170, 170))
        assert distance_m(*a, *a) == 0.0
        assert distance_m(*a, *b) == pytest.approx(distance_m(*b, *a))


@pytest.mark.parametrize('unit,factor', [('%', 1.0), (' percent', 1.0)])
def test_property_threshold_is_what_was_written(unit, factor):
    rng = random.Random(11)
    for _ in range(100):
        value = round(rng.uniform(0, 100), 1)
        got = parse_condition(f'when the battery drops below {value:g}{unit}')
        assert isinstance(got, Predicate)
        assert got.threshold == pytest.approx(value * factor)
        assert got.holds({'battery_pct': value - 0.05}) and not got.holds({'battery_pct': value})


def test_property_parser_never_raises_and_always_answers():
    rng = random.Random(3)
    words = ('when if once the battery wind altitude below above drops exceeds 25 % m ft knots '
             'and not unless it we see a person home of within 12:30 after seconds , . -5 '
             '°C ppm reaches').split()
    for _ in range(500):
        text = ' '.join(rng.choice(words) for _ in range(rng.randint(0, 9)))
        got = parse_condition(text, rng.choice([(), ('battery_status',)]))
        assert isinstance(got, (Predicate, Unreadable))
        if isinstance(got, Unreadable):
            assert got.reason
        else:
            assert got.describe()


def test_condition_notes_for_the_route_response():
    notes = condition_notes(['land', 'battery_status', 'return_to_home'],
                            {'land': 'when it drops below 25%',
                             'return_to_home': 'if it gets too windy'})
    assert notes == ['land waits for battery_status.battery_pct < 25 %',
                     "return_to_home will not be armed: condition 'if it gets too windy' not "
                     'executable: no threshold: say a number and unit (e.g. "if the wind '
                     'exceeds 12 m/s")']


# -- the forms operators type (issue 27) -----------------------------------------------------
TYPED = [
    # text, context sensors, request, sensor, field, op, threshold, unit
    ('bat<20', (), '', 'battery_status', 'battery_pct', '<', 20.0, '%'),
    ('alt >= 50', (), '', 'altitude_sensor', 'altitude_m', '>=', 50.0, 'm'),
    ('rssi < -95', (), '', 'link_quality', 'rssi_dbm', '<', -95.0, 'dBm'),
    ('co>35ppm', (), '', 'air_quality_sensor', 'co_ppm', '>', 35.0, 'ppm'),
    ('batt <= 30%', (), '', 'battery_status', 'battery_pct', '<=', 30.0, '%'),
    ('esc temp > 85', (), '', 'motor_status', 'esc_temp_c', '>', 85.0, '°C'),
    # the threshold first: the quantity reaching it (falling for the battery, rising for heights)
    ('at 15% battery', (), '', 'battery_status', 'battery_pct', '<=', 15.0, '%'),
    ('20% battery', (), '', 'battery_status', 'battery_pct', '<=', 20.0, '%'),
    ('30 m up', (), '', 'altitude_sensor', 'altitude_m', '>=', 30.0, 'm'),
    ('10 m/s wind', (), '', 'wind_estimate', 'wind_mps', '>=', 10.0, 'm/s'),
    ('35% left', (), '', 'battery_status', 'battery_pct', '<=', 35.0, '%'),
    ('at 2 m clearance', (), '', 'obstacle_proximity', 'nearest_m', '<=', 2.0, 'm'),
    ('at -90 dBm', (), '', 'link_quality', 'rssi_dbm', '<=', -90.0, 'dBm'),
    ('at 20%', (), '', 'battery_status', 'battery_pct', '<=', 20.0, '%'),
    # relative and clock time
    ('in 10 s', (), '', CLOCK, 'elapsed_s', '>=', 10.0, 's'),
    ('wait 1.5 min', (), '', CLOCK, 'elapsed_s', '>=', 90.0, 's'),
    ('give it 2 mins', (), '', CLOCK, 'elapsed_s', '>=', 120.0, 's'),
    ('30 seconds later', (), '', CLOCK, 'elapsed_s', '>=', 30.0, 's'),
    ('after 3 minutes of recording', (), '', CLOCK, 'elapsed_s', '>=', 180.0, 's'),
    ('in half an hour', (), '', CLOCK, 'elapsed_s', '>=', 1800.0, 's'),
    ('at 9am', (), '', CLOCK, 'clock_s', '>=', 32400.0, 's'),
    ('at 6:15pm', (), '', CLOCK, 'clock_s', '>=', 65700.0, 's'),
    ('at 12am', (), '', CLOCK, 'clock_s', '>=', 0.0, 's'),
    ('at noon', (), '', CLOCK, 'clock_s', '>=', 43200.0, 's'),
    ('at 1700', (), '', CLOCK, 'clock_s', '>=', 61200.0, 's'),
    ('at 15:45 sharp', (), '', CLOCK, 'clock_s', '>=', 56700.0, 's'),
    # numbers in words
    ('at twenty percent', (), '', 'battery_status', 'battery_pct', '<=', 20.0, '%'),
    ('when the battery drops below thirty five percent', (), '', 'battery_status',
     'battery_pct', '<', 35.0, '%'),
    ('once we are over two hundred feet', (), '', 'altitude_sensor', 'altitude_m', '>', 60.96,
     'm'),
    ('in thirty seconds', (), '', CLOCK, 'elapsed_s', '>=', 30.0, 's'),
    ('when the battery is at a quarter', (), '', 'battery_status', 'battery_pct', '<=', 25.0,
     '%'),
    ('hold when you get down to ten metres', (), '', 'altitude_sensor', 'altitude_m', '<=',
     10.0, 'm'),
    # should ..., comparatives
    ('should the wind exceed 10 m/s', (), '', 'wind_estimate', 'wind_mps', '>', 10.0, 'm/s'),
    ('should gusts top 12 m/s', (), '', 'wind_estimate', 'gust_mps', '>', 12.0, 'm/s'),
    ('should we lose the link', (), '', 'link_quality', 'link_lost', '==', True, ''),
    ('if the signal gets weaker than -90', (), '', 'link_quality', 'rssi_dbm', '<', -90.0,
     'dBm'),
    ('if it gets weaker than -85 dBm', (), '', 'link_quality', 'rssi_dbm', '<', -85.0, 'dBm'),
    ("if it's windier than 11 m/s", (), '', 'wind_estimate', 'wind_mps', '>', 11.0, 'm/s'),
    ('if latency gets worse than 400 ms', (), '', 'link_quality', 'latency_ms', '>', 400.0,
     'ms'),
    ('if lag gets over 1 second', (), '', 'link_quality', 'latency_ms', '>', 1000.0, 'ms'),
    ('if the escs get hotter than 75', (), '', 'motor_status', 'esc_temp_c', '>', 75.0, '°C'),
    ("if the roof's hotter than 90", (), '', 'thermal_camera', 'max_temp_c', '>', 90.0, '°C'),
    ('if it gets colder than 5 degrees', (), '', 'weather_sensor', 'air_temp_c', '<', 5.0,
     '°C'),
    # volts; temperatures without a unit in °C; below zero
    ('when the pack hits 14.2V', (), '', 'battery_status', 'voltage_v', '<=', 14.2, 'V'),
    ('should the pack drop below 14 V', (), '', 'battery_status', 'voltage_v', '<', 14.0, 'V'),
    ('at 14.4 volts', (), '', 'battery_status', 'voltage_v', '<=', 14.4, 'V'),
    ('if the motors go over 80', (), '', 'motor_status', 'esc_temp_c', '>', 80.0, '°C'),
    ('rtl if it gets above 35 outside', (), '', 'weather_sensor', 'air_temp_c', '>', 35.0,
     '°C'),
    ('if the escs get over 176F', (), '', 'motor_status', 'esc_temp_c', '>', 80.0, '°C'),
    ('if it drops below zero', (), '', 'weather_sensor', 'air_temp_c', '<', 0.0, '°C'),
    ('if it goes below freezing', (), '', 'weather_sensor', 'air_temp_c', '<', 0.0, '°C'),
    ('land if temp goes sub zero', (), '', 'weather_sensor', 'air_temp_c', '<', 0.0, '°C'),
    ('when air temp falls under minus 3', (), '', 'weather_sensor', 'air_temp_c', '<', -3.0,
     '°C'),
    ('at -8 degrees', (), '', 'weather_sensor', 'air_temp_c', '<=', -8.0, '°C'),
    # the detector's distance, never the altitude
    ('if a person is within 3 m', (), '', 'object_detector', 'person_distance_m', '<', 3.0,
     'm'),
    ('if someone gets within 2 m', (), '', 'object_detector', 'person_distance_m', '<', 2.0,
     'm'),
    ('if a car is closer than 20 m', (), '', 'object_detector', 'vehicle_distance_m', '<',
     20.0, 'm'),
    ('if a person comes within 15 m of the drone', (), '', 'object_detector',
     'person_distance_m', '<', 15.0, 'm'),
    ('if the nearest vehicle is under 30 m away', (), '', 'object_detector',
     'vehicle_distance_m', '<', 30.0, 'm'),
    ('if a horse is closer than 40 ft', (), '', 'object_detector', 'animal_distance_m', '<',
     12.192, 'm'),
    ('once you see 3 or more people', (), '', 'object_detector', 'persons', '>=', 3.0, ''),
    # pronouns: the referent named earlier in the request
    ('if it gets within 6 m', (), 'see that cow? if it gets within 6 m, climb to 25 m',
     'object_detector', 'animal_distance_m', '<', 6.0, 'm'),
    ('if they pass 85', ('land',), 'keep an eye on the escs, if they pass 85 land',
     'motor_status', 'esc_temp_c', '>', 85.0, '°C'),
    ('when it drops below 25%', (), "battery's at 60, when it drops below 25% land",
     'battery_status', 'battery_pct', '<', 25.0, '%'),
    ('if they hit 13 m/s', (), 'the gusts are picking up, if they hit 13 m/s land',
     'wind_estimate', 'gust_mps', '>=', 13.0, 'm/s'),
    # arrival at home; states
    ('when home is less than 100 m away', (), '', 'gps_position', 'distance_m', '<', 100.0,
     'm'),
    ('once closer than 30 m to home', (), '', 'gps_position', 'distance_m', '<', 30.0, 'm'),
    ('within a hundred metres of home', (), '', 'gps_position', 'distance_m', '<=', 100.0, 'm'),
    ('once you get home', (), '', 'gps_position', 'distance_m', '<=', 10.0, 'm'),
    ('within 12 m of lat 37.7749 lon -122.4194', (), '', 'gps_position', 'distance_m', '<=',
     12.0, 'm'),
    ('after touchdown', (), '', 'vehicle_state', 'on_ground', '==', True, ''),
    ('after the survey', (), '', 'vehicle_state', 'mission', '==', 'finished', ''),
    ('mission done', (), '', 'vehicle_state', 'mission', '==', 'finished', ''),
    ('once off the ground', (), '', 'vehicle_state', 'on_ground', '==', False, ''),
    ('if the rc link cuts out', (), '', 'link_quality', 'link_lost', '==', True, ''),
    ('if we drop more than 10% of packets', (), '', 'link_quality', 'packet_loss_pct', '>',
     10.0, '%'),
    ('if it leaves the area', (), '', 'geofence_monitor', 'inside', '==', False, ''),
    ('when the drone has climbed to 60 m', (), '', 'altitude_sensor', 'altitude_m', '>=', 60.0,
     'm'),
    ('when the battery is down to 15%', (), '', 'battery_status', 'battery_pct', '<=', 15.0, '%'),
    ('upon seeing a person', (), '', 'object_detector', 'persons', '>=', 1.0, ''),
    ('upon landing', (), '', 'vehicle_state', 'on_ground', '==', True, ''),
    ('upon link loss', (), '', 'link_quality', 'link_lost', '==', True, ''),
    ('if there is a person in the frame', (), '', 'object_detector', 'persons', '>=', 1.0, ''),
    ('when a person is 3 m away', (), '', 'object_detector', 'person_distance_m', '<=', 3.0,
     'm'),
    ('once home is within 100 m', (), '', 'gps_position', 'distance_m', '<=', 100.0, 'm'),
    ('when the distance to home is under 30 m', (), '', 'gps_position', 'distance_m', '<', 30.0,
     'm'),
    ('at 47.39, 8.54', (), '', 'gps_position', 'distance_m', '<=', 10.0, 'm'),
    ('for 30 s', (), '', CLOCK, 'elapsed_s', '>=', 30.0, 's'),
    ('at 14h30', (), '', CLOCK, 'clock_s', '>=', 52200.0, 's'),
    ('once it lands', (), '', 'vehicle_state', 'on_ground', '==', True, ''),
    ('if comms are lost', (), '', 'link_quality', 'link_lost', '==', True, ''),
    ('if the panel temp exceeds 60', (), '', 'thermal_camera', 'max_temp_c', '>', 60.0, '°C'),
]


@pytest.mark.parametrize('text,ctx,request_text,sensor,field,op,threshold,unit', TYPED)
def test_parses_operator_forms(text, ctx, request_text, sensor, field, op, threshold, unit):
    got = parse_condition(text, ctx, request=request_text)
    assert isinstance(got, Predicate), got
    assert (got.sensor, got.field, got.op, got.unit) == (sensor, field, op, unit), \
        got.describe()
    if isinstance(threshold, float):
        assert got.threshold == pytest.approx(threshold, abs=1e-6)
    else:
        assert got.threshold == threshold


TYPED_REFUSED = [
    # "is the light on? if so, turn it off": a condition on the answer to a question
    ('if so', 'waits on the answer to a question'),
    ('if not', 'waits on the answer to a question'),
    ('if yes', 'waits on the answer to a question'),
    ('at 8am yesterday', 'a time in the past'),
    ('at 9am tomorrow', 'only times of the current day'),
    ('at 14:30 local time', 'read in UTC'),
    ("at 5 o'clock", 'say am or pm'),
    ('at 13pm', 'not a clock time'),
    ('at 25:99', 'not a clock time'),
    ('in a few seconds', 'no duration'),
    ('when you reach the red barn', "unknown place 'the red barn'"),
    ('hover when within 20 m of the boat', "unknown place 'the boat'"),
    ("once you're over Silo3", "unknown place 'silo3'"),
    ('when 50 m from the substation', "unknown place 'the substation'"),
    ('if it gets within 6 m', 'never read as the altitude'),
    ('when a cell drops below 3.5 V', 'cell voltages are not reported'),
    ('if the motors go over 400', 'not a plausible motor temperature'),
    ('if alt > 400', 'not a plausible altitude'),
    ('if the battery gets worse than 20%', 'says no direction for battery'),
    ('when fewer than 2 people are seen', 'fewer detections'),
    ('while the wind is under 8 m/s', '"while" conditions are not executed'),
    ('as long as the battery is above 30%', '"as long as" conditions are not executed'),
    ('if wind > 10 or battery < 20', 'one condition per action'),
    ('if the drone gets hotter than 60', 'which temperature of the drone'),
    ('at sunset', 'sunrise and sunset are not known'),
    ('within 10 yards of home', "unit 'yards' is not read"),
    ('if the motors exceed 9000 rpm', "unit 'rpm' is not read"),
    ('within 5 m of waypoint 3', "only reaching a mission's waypoint is watched"),
    ('when you get near the tower', "unknown place 'the tower'"),
    ('before the battery hits 10%', '"before" conditions are not executed'),
    ('if battery < 20 and wind > 10', 'one condition per action'),
]


@pytest.mark.parametrize('text,words', TYPED_REFUSED)
def test_refuses_operator_forms_with_a_reason(text, words):
    got = parse_condition(text)
    assert isinstance(got, Unreadable), got
    assert words in got.reason, got.reason


def test_a_proximity_is_never_read_as_the_altitude():
    for text in ('emergency stop if a person is within 3 m', 'if anyone is closer than 3 m',
                 'if something gets within 3 m', 'if it gets within 3 m', 'within 3 m of us',
                 'if a dog comes within 3 m of the drone'):
        got = parse_condition(text)
        assert not (isinstance(got, Predicate) and got.sensor == 'altitude_sensor'), text


def test_the_default_unit_is_shown():
    got = parse_condition('if the motors go over 80')
    assert isinstance(got, Predicate)
    assert got.describe() == 'motor_status.esc_temp_c > 80 °C (written 80, no unit: read as °C)'


def test_arrival_at_a_place_of_the_places_file(tmp_path):
    from tool_router.common.places import load_places
    path = tmp_path / 'places.yaml'
    path.write_text('places:\n  - name: North Gate\n    aliases: [gate 2]\n    lat: 47.399\n'
                    '    lon: 8.547\n    radius_m: 8\n', encoding='utf-8')
    places = load_places(path)
    reach = parse_condition('when you reach the north gate', places=places)
    assert isinstance(reach, Predicate) and reach.target == (47.399, 8.547)
    assert (reach.field, reach.op, reach.threshold) == ('distance_m', '<=', 8.0)
    near = parse_condition('once within 20 m of gate 2', places=places)
    assert isinstance(near, Predicate) and (near.threshold, near.target) == (20.0, (47.399, 8.547))
    unknown = parse_condition('when you reach the south gate', places=places)
    assert isinstance(unknown, Unreadable) and '(North Gate)' in unknown.reason
    assert near.holds({'lat': 47.399, 'lon': 8.5471}) and not near.holds({'lat': 47.4,
                                                                            'lon': 8.547})


@pytest.mark.parametrize('text, problem', [
    ('places:\n  - name: x\n    lat: 91\n    lon: 8\n', ':3: places.0.lat'),
    ('places:\n  - name: x\n    lat: 1\n    lon: 2\n    radius: 3\n', ':5: places.0.radius'),
    ('places:\n  - {name: a, lat: 1, lon: 2}\n  - {name: A, lat: 3, lon: 4}\n', 'two places'),
])
def test_a_bad_places_file_names_file_and_line(tmp_path, text, problem):
    from tool_router.common.errors import ConfigError
    from tool_router.common.places import load_places
    path = tmp_path / 'places.yaml'
    path.write_text(text, encoding='utf-8')
    with pytest.raises(ConfigError) as err:
        load_places(path)
    assert problem in str(err.value) and str(path) in str(err.value)


def test_the_shipped_places_file_is_valid_and_names_no_place():
    from tool_router.common.places import load_places
    assert load_places() == {}


def test_detection_distances_are_in_the_simulated_detectors_reading():
    from tool_router.common.conditions import DETECTIONS
    vehicle = SimVehicle()
    on_ground = READINGS['object_detector'](vehicle.state)
    for d in DETECTIONS:
        assert d.count in on_ground and on_ground[d.distance] is None
    predicate = parse_condition('if a person is within 30 m')
    assert isinstance(predicate, Predicate) and not predicate.holds(on_ground)
    assert vehicle.command('arm_motors').ok and vehicle.command('takeoff').ok
    assert predicate.holds(READINGS['object_detector'](vehicle.state))


def test_numbers_in_words():
    from tool_router.common.numbers import digits
    assert digits('thirty five percent') == '35 percent'
    assert digits('a hundred metres and two hundred feet') == '100 metres and 200 feet'
    assert digits('one and a half minutes') == '1.5 minutes'
    assert digits('in a minute, minus 3') == 'in 1 minute, -3'
    assert digits('the one on the left') == 'the one on the left'
    assert digits('someone, often, tone') == 'someone, often, tone'


def test_condition_notes_use_places_and_the_request():
    notes = condition_notes(['land'], {'land': 'when you reach the jetty'})
    assert notes[0].startswith("land will not be armed: condition 'when you reach the jetty' "
                               "not executable: unknown place 'the jetty'")
    notes = condition_notes(['hold_position'], {'hold_position': 'if it gets within 6 m'},
                            request='see that cow? if it gets within 6 m, hover')
    assert notes == ['hold_position waits for object_detector.animal_distance_m < 6 m']


def test_a_proximity_to_coordinates_in_degrees_minutes_seconds():
    from tool_router.common.conditions import parse_condition
    p = parse_condition('when within 50 m of 47°23\'54.6"N 8°32\'47.8"E')
    assert (p.field, p.op, p.threshold) == ('distance_m', '<=', 50.0)
    assert p.target == (pytest.approx(47.3985), pytest.approx(8.546611))
    labelled = parse_condition('when within 20 m of lat 47.3985 lon 8.5466')
    assert labelled.target == (47.3985, 8.5466)


@pytest.mark.parametrize('text, seconds', [
    ('in 2 min 30 s', 150.0), ('after 1 minute 30 seconds', 90.0),
    ('after 1 minute and 20 seconds', 80.0), ('wait 1 h 5 min', 3900.0), ('in 90 s', 90.0),
])
def test_a_compound_waiting_time_adds_up(text, seconds):
    from tool_router.common.conditions import parse_condition
    p = parse_condition(text)
    assert (p.field, p.op, p.threshold) == ('elapsed_s', '>=', seconds)


def test_the_splitter_keeps_a_compound_waiting_time_whole():
    from tool_router.common.clauses import split_clauses
    clauses = [(c.role, c.text, c.condition) for c in split_clauses('in 2 min 30 s take a photo')]
    assert clauses == [('condition', '2 min 30 s', ''),
                       ('action', 'take a photo', 'in 2 min 30 s')]  # was "30 s take a photo"


@pytest.mark.parametrize('text', [
    'if it starts tilting more than 20 degrees', 'if it tips past 30°',
    'if the quad leans over more than 35 degrees', 'when it is banking past 40 degrees',
])
def test_a_lean_in_degrees_is_an_attitude_never_a_temperature(text):
    # a bare "degrees" defaults to °C; a lean had been watched as the air's temperature
    read = parse_condition(text)
    assert not isinstance(read, Predicate) and 'angles are not watchable' in read.reason


@pytest.mark.parametrize('text, field', [
    # "it's" names no thing: a bare temperature of "it" is the weather's (stop 46; the thermal
    # camera's surface maximum had been watched)
    ("if it's colder than 0", 'air_temp_c'),
    ("if it's hotter than 35 out there", 'air_temp_c'),
    ("if the roof's hotter than 60", 'max_temp_c'),
    # the wind calming is the wind's
    ('once it calms below 5 m/s', 'wind_mps'),
    ('when it dies down below 4 m/s', 'wind_mps'),
    # the proximity sensor's reading is the nearest obstacle, never the altitude
    ('if the proximity sensor reads under 3 m', 'nearest_m'),
    ('telemetry lag over 500 ms', 'latency_ms'),
])
def test_what_an_unnamed_quantity_is(text, field):
    read = parse_condition(text)
    assert isinstance(read, Predicate) and read.field == field, read


@pytest.mark.parametrize('text', ['when the link is under 30%', "once the link's back above 50%"])
def test_a_link_in_percent_is_refused_never_the_battery(text):
    # no field reports the link in percent; it had been watched as the battery's charge
    read = parse_condition(text)
    assert not isinstance(read, Predicate) and 'signal strength' in read.reason


@pytest.mark.parametrize('text,number', [
    ('at waypoint 4', 4), ('when we hit WP 5', 5), ('once at wp3', 3), ('once past wp 3', 3),
    ('after waypoint four', 4), ('when the drone reaches waypoint #2', 2),
    ('once waypoint 6 is reached', 6), ('when you get to wp 7', 7),
    ('after the third waypoint', 3), ('when we reach the 3rd waypoint', 3),
    ('at the first wp', 1), ('once past the twelfth waypoint', 12)])
def test_a_waypoint_reached_is_the_mission_item_the_vehicle_reports(text, number):
    # numbered as a ground station shows them; vehicle_state.waypoint is the last item reached
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.sensor, read.field, read.op, read.threshold) == \
        ('vehicle_state', 'waypoint', '>=', float(number))
    assert not read.holds({'waypoint': number - 1}) and read.holds({'waypoint': number})


@pytest.mark.parametrize('text', ['if we are 10 m from waypoint 3', 'within 5 m of WP2',
                                  'when the battery at waypoint 3 is low', 'at waypoint 0',
                                  'when waypoint 2 is blocked'])
def test_anything_about_a_waypoint_but_reaching_it_is_refused_with_its_reason(text):
    read = parse_condition(text)
    assert not isinstance(read, Predicate)
    assert "only reaching a mission's waypoint is watched" in read.reason


@pytest.mark.parametrize('text, sensor, op, threshold', [
    # a level written with its verb alone is reached, as "is at" is
    ('when the battery is 20%', 'battery_status', '<=', 20.0),
    ('once the altitude reads 50 m', 'altitude_sensor', '>=', 50.0),
    ('when the pack reads 20%', 'battery_status', '<=', 20.0),
    ('when the wind is 10 m/s', 'wind_estimate', '>=', 10.0),
])
def test_a_level_with_its_verb_alone_is_reached(text, sensor, op, threshold):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.sensor, read.op, read.threshold) == (sensor, op, threshold)


@pytest.mark.parametrize('text', ['when the battery is 20 minutes from empty',
                                  'when the gate is 50 m away'])
def test_a_time_or_a_distance_after_is_is_no_level(text):
    assert not isinstance(parse_condition(text), Predicate)


@pytest.mark.parametrize('text', ['when gps is back', 'once gps comes back', 'once we regain gps',
                                  'when you get a gps fix', 'after gps lock', 'when gps locks',
                                  "as soon as we've got a solid GPS fix",
                                  'when gps signal is back'])
def test_a_gps_fix_regained_is_watched(text):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.sensor, read.field, read.threshold) == ('gps_position', 'gps_fix', True)


@pytest.mark.parametrize('text', ['when the link comes back', 'once we regain the connection',
                                  'when the signal is back', 'once telemetry is restored'])
def test_a_link_regained_is_watched(text):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.sensor, read.field, read.threshold) == ('link_quality', 'link_lost', False)


@pytest.mark.parametrize('text, sensor, threshold', [
    ('if it gets below -5', 'weather_sensor', -5.0),
    ('if it drops under -12', 'weather_sensor', -12.0),
    ('if the roof gets below -5', 'thermal_camera', -5.0)])
def test_a_bare_number_below_zero_is_a_temperature(text, sensor, threshold):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.sensor, read.op, read.threshold, read.unit) == (sensor, '<', threshold, '°C')


@pytest.mark.parametrize('text, context', [
    ('if it gets below -60', ()),  # colder than the air's plausible range: dBm, or a typo
    ('if it gets below -5', ('link_quality',)),  # the request's radio: a signal, not refused
    ('if it drops below 5', ())])  # no sign: still no quantity
def test_a_bare_negative_number_defers_to_the_request(text, context):
    read = parse_condition(text, context)
    if context:
        assert isinstance(read, Predicate) and read.field == 'rssi_dbm', read
    else:
        assert not isinstance(read, Predicate), read


def test_a_level_after_an_apostrophe_s():
    read = parse_condition("if the wind's 10 m/s")
    assert isinstance(read, Predicate), read
    assert (read.field, read.op, read.threshold) == ('wind_mps', '>=', 10.0)
    assert not isinstance(parse_condition("if the battery's 20 minutes from empty"), Predicate)


@pytest.mark.parametrize('text, parts', [
    ('wind over 10 m/s or battery under 25%', ['wind over 10 m/s', 'battery under 25%']),
    ("you're below 20% battery or under 10 meters", ["you're below 20% battery",
                                                      'under 10 meters']),
    ('you see 3 or more people', ['you see 3 or more people']),
    ('20 m or less', ['20 m or less']),
    ('after 1 minute and 20 seconds', ['after 1 minute and 20 seconds']),
    ('the wind picks up, but the battery is fine', ['the wind picks up', 'the battery is fine'])])
def test_joined_parts(text, parts):
    assert joined_parts(text) == parts


@pytest.mark.parametrize('text', ['if gps lost', 'if gps is lost', 'on loss of gps',
                                  'if we lose the gps', 'if the gps signal is lost',
                                  'if gps drops out'])
def test_a_gps_loss_is_the_fix_never_the_radio(text):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.sensor, read.field, read.threshold) == ('gps_position', 'gps_fix', False)
    assert read.holds({'gps_fix': False}) and not read.holds({'gps_fix': True})


@pytest.mark.parametrize('text, either', [
    ("when it's 2 m off the ground", True), ('when you reach 50 m', True), ('once at 40 m', True),
    ('when it climbs to 50 m', False), ('when it gets down to 10 m', False),
    ('once above 30 m', False), ('30 m up', False), ('when the battery is 20%', False)])
def test_an_altitude_reached_without_a_direction_takes_its_side_from_the_first_reading(
        text, either):
    read = parse_condition(text)
    assert isinstance(read, Predicate) and read.either_side == either
    high, low = read.settled(100.0), read.settled(0.0)
    if either:
        assert (high.op, low.op) == ('<=', '>=') and not high.either_side
        assert '<= when above it' in read.describe()
    else:
        assert high == read == low


@pytest.mark.parametrize('text, field, op', [('if batt 20%', 'battery_pct', '<='),
                                             ('if the wind 10 m/s', 'wind_mps', '>='),
                                             ('if esc temp 90', 'esc_temp_c', '>=')])
def test_a_sensed_quantity_then_its_level_is_reached(text, field, op):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.field, read.op) == (field, op)


@pytest.mark.parametrize('text', ['if altitude 50 m', 'if speed 5 m/s', 'if battery 20 minutes',
                                  'if left 2 m'])
def test_a_set_quantity_then_a_number_is_no_level(text):
    assert not isinstance(parse_condition(text), Predicate)


@pytest.mark.parametrize('text, op, metres', [
    ('once 2km out', '>=', 2000.0),  # had been an altitude of 2,000 m
    ("when we're 500 m out", '>=', 500.0),
    ('if we get more than 500 m away', '>', 500.0),
    ('if distance to home > 1 km', '>', 1000.0),
    ('if the distance from home >= 800 m', '>=', 800.0),
    ('if we get more than 500 m away from base', '>', 500.0)])
def test_far_out_with_nothing_else_named_is_from_home(text, op, metres):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert (read.field, read.op, read.threshold, read.target) == ('distance_m', op, metres, HOME)


@pytest.mark.parametrize('text', ['if within 5 m', 'if it gets hotter than 35 out',
                                  'if 500 away'])
def test_near_something_unnamed_or_no_length_is_not_home(text):
    read = parse_condition(text)
    assert not (isinstance(read, Predicate) and read.field == 'distance_m'), read


@pytest.mark.parametrize('text, op', [
    ('if battery is less than or equal to 20 percent', '<='),
    ('once the battery is at or below 30%', '<='),
    ('if altitude is greater than or equal to 100 m', '>='),
    ('if wind is equal to or more than 10 m/s', '>=')])
def test_or_equal_comparisons_are_one_condition(text, op):
    read = parse_condition(text)
    assert isinstance(read, Predicate), read
    assert read.op == op


def test_base_is_home():
    read = parse_condition('once back at base')
    assert isinstance(read, Predicate) and read.target == HOME


def test_rc_loss_two_plus_people_and_a_critical_battery():
    rc = parse_condition('if rc lost')
    assert isinstance(rc, Predicate) and (rc.field, rc.threshold) == ('link_lost', True)
    people = parse_condition('if 2+ people detected')
    assert isinstance(people, Predicate) and (people.field, people.op, people.threshold) == (
        'persons', '>=', 2.0)
    critical = parse_condition('when the battery is critical')
    assert isinstance(critical, Unreadable) and 'no threshold' in critical.reason


@pytest.mark.parametrize('text, field, held', [
    # a reading held for a time: the comparison and how long it must hold (stop 50; refused
    # before as "more than one number" or a unit that does not fit)
    ('if link lost for 5 s', 'link_lost', 5.0),
    ('if the link is lost for more than 10 seconds', 'link_lost', 10.0),
    ('if the wind stays above 10 m/s for 2 minutes', 'wind_mps', 120.0),
    ('when the wind stays over 8 m/s for 1 minute and 30 seconds', 'wind_mps', 90.0),
])
def test_a_reading_held_for_a_time(text, field, held):
    read = parse_condition(text)
    assert isinstance(read, Predicate) and (read.field, read.held_s) == (field, held)
    assert read.text == text and f'for {held:g} s' in read.describe()


@pytest.mark.parametrize('text', ['after 30 seconds', 'for 30 s', 'if the link is lost'])
def test_no_hold_without_a_reading_held(text):
    assert parse_condition(text).held_s == 0.0
