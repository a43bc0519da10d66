"""The condition grammar: what parses (and into what), what is refused and why. No ROS."""
from __future__ import annotations

import random

import pytest

from tool_router.common.catalog import Kind
from tool_router.common.conditions import (
    CLOCK, HOME, QUANTITIES, STATES, Predicate, Unreadable, condition_notes, decode_reading,
    distance_m, encode_reading, parse_condition)
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
    ('if we leave the allowed area', (), 'geofence_monitor', 'inside', '==', False),
    ('once the survey is done', (), 'vehicle_state', 'mission', '==', 'finished'),
    ('once the mission is finished', (), 'vehicle_state', 'mission', '==', 'finished'),
    ("once it's down on the ground", (), 'vehicle_state', 'on_ground', '==', True),
    ('when it has landed', (), 'vehicle_state', 'on_ground', '==', True),
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
