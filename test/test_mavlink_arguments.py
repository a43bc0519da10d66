"""Arguments read from request text (pure): values found, units converted, refusals."""
from __future__ import annotations

import pytest

from tool_router.executor.arguments import ArgumentError, extract, takes_arguments

FLIGHT = 'arm, take off to 20 m, fly to 47.3990, 8.5470 at 30 m, take a photo and return home'


def test_flight_request_gives_each_tool_its_own_values():
    assert extract('takeoff', FLIGHT).height_m == 20.0
    goto = extract('goto_waypoint', FLIGHT)
    assert (goto.lat, goto.lon, goto.altitude_m) == (47.399, 8.547, 30.0)
    assert '47.3990, 8.5470' in goto.source


@pytest.mark.parametrize('text, tool, field, value', [
    ('climb to 100 ft', 'set_altitude', 'altitude_m', 30.48),
    ('take off and then set altitude to 45.5 m', 'set_altitude', 'altitude_m', 45.5),
    ('turn to heading 270', 'set_heading', 'heading_deg', 270.0),
    ('face north-east', 'set_heading', 'heading_deg', 45.0),
    ('rotate to -90 degrees', 'set_heading', 'heading_deg', 270.0),
    ('slow down to 18 km/h', 'set_speed', 'speed_mps', 5.0),
    ('set speed 10 knots', 'set_speed', 'speed_mps', 5.144),
    ('tilt the gimbal 45 degrees down', 'gimbal_control', 'pitch_deg', -45.0),
    ('point the camera straight down', 'gimbal_control', 'pitch_deg', -90.0),
    ('take off to 15 m then hold', 'takeoff', 'height_m', 15.0),
    ('fly to 47.3985, 8.5466 at 25 m at 4 m/s', 'goto_waypoint', 'speed_mps', 4.0),
    ('fly to 47.3985, 8.5466 at 25 m at 4 m/s', 'goto_waypoint', 'altitude_m', 25.0),
    ('hover for 30 s then land', 'hold_position', 'duration_s', 30.0),
    ('hold position for 2 minutes', 'hold_position', 'duration_s', 120.0),
    ('hover for 2 min 30 s', 'hold_position', 'duration_s', 150.0),  # was 120: parts add up
    ('hover 1 minute, 20 seconds', 'hold_position', 'duration_s', 80.0),
    ('orbit the tower at 30 m radius for 2 min', 'orbit_point', 'radius_m', 30.0),
    ('orbit the tower at 30 m radius for 2 min', 'orbit_point', 'duration_s', 120.0),
    ('circle 47.3985, 8.5466 with a radius of 100 ft', 'orbit_point', 'radius_m', 30.48),
    ('circle 47.3985, 8.5466 with a radius of 100 ft', 'orbit_point', 'lat', 47.3985),
    # numbers in words (read as the router reads them)
    ('take off to twenty metres', 'takeoff', 'height_m', 20.0),
    ('climb to a hundred feet', 'set_altitude', 'altitude_m', 30.48),
    ('go to the dock at five metres per second', 'set_speed', 'speed_mps', 5.0),
    ('hover for half a minute', 'hold_position', 'duration_s', 30.0),
    ('turn to heading ninety', 'set_heading', 'heading_deg', 90.0),
    ('fly to 47.3985, 8.5466 at thirty five metres', 'goto_waypoint', 'altitude_m', 35.0),
    # a comma before three digits separates thousands ('10,000 ft' was read as 3 m)
    ('orbit the tower at a 1,000 ft radius', 'orbit_point', 'radius_m', 304.8),
    ('climb to 1,5 m', 'set_altitude', 'altitude_m', 1.5),
    ('set altitude 120 m AGL', 'set_altitude', 'altitude_m', 120.0),
    # targets beside the words of a change (test_a_change_is_refused_not_read_as_a_target)
    ('climb to 10 m', 'set_altitude', 'altitude_m', 10.0),
    ('lower the drone to 3 m', 'set_altitude', 'altitude_m', 3.0),
    ('hold at 30 m', 'set_altitude', 'altitude_m', 30.0),
    ('face 270 degrees', 'set_heading', 'heading_deg', 270.0),
    ('turn to heading 90', 'set_heading', 'heading_deg', 90.0),
    ('slow down to 2 m/s', 'set_speed', 'speed_mps', 2.0),
])
def test_values_in_canonical_units(text, tool, field, value):
    assert getattr(extract(tool, text), field) == pytest.approx(value, abs=1e-3)


@pytest.mark.parametrize('text, lat, lon', [
    ('fly to 47°23\'54.6"N 8°32\'47.8"E', 47.3985, 8.546611),  # as map apps copy them
    ('fly to 33°52\'07.7"S 151°12\'33.5"E at 30 m', -33.868806, 151.209306),
    ('go to lat 47.3985 lon 8.5466', 47.3985, 8.5466),
    ('go to latitude: 47.3985, longitude: 8.5466 at 20 m', 47.3985, 8.5466),
    ('fly to lat -33.8688 long 151.2093', -33.8688, 151.2093),
])
def test_coordinates_in_degrees_minutes_seconds_or_labelled(text, lat, lon):
    args = extract('goto_waypoint', text)
    assert (args.lat, args.lon) == (pytest.approx(lat, abs=1e-6), pytest.approx(lon, abs=1e-6))


def test_hemisphere_letters_sign_the_coordinates():
    args = extract('goto_waypoint', 'go to 33.8688 S 151.2093 E')
    assert (args.lat, args.lon) == (-33.8688, 151.2093)
    west = extract('goto_waypoint', 'fly to 40.7128 N, 74.0060 W')
    assert (west.lat, west.lon) == (40.7128, -74.006)


def test_takeoff_height_is_optional():
    assert extract('takeoff', 'take off').height_m is None


@pytest.mark.parametrize('text, tool, words', [
    ('fly to the red barn', 'goto_waypoint', 'coordinates'),
    ('climb to 50', 'set_altitude', "'50' has no unit"),
    ('set the speed a bit higher', 'set_speed', 'a speed'),
    ('turn around', 'set_heading', 'a heading'),
    ('fly to 147.3990, 8.5470', 'goto_waypoint', 'not a latitude/longitude pair'),
    ('tilt the gimbal to 80 degrees', 'gimbal_control', 'outside the gimbal range'),
    ('turn to 450 degrees', 'set_heading', 'not a heading'),
    # an altitude above sea level is not converted (the launch point's elevation is unknown)
    ('climb to 400 m MSL', 'set_altitude', 'above sea level is not converted'),
    ('climb to 1,300 ft above sea level', 'set_altitude', 'above sea level is not converted'),
    ('fly to 47.3985, 8.5466 at 400 m AMSL', 'goto_waypoint', 'above sea level is not'),
    # spelled digits side by side are not guessed at (270? 2 then 70?)
    ('turn to heading two seventy', 'set_heading', 'a heading'),
    ('heading two seven zero', 'set_heading', 'a heading'),
])
def test_missing_or_unusable_required_value_is_refused(text, tool, words):
    with pytest.raises(ArgumentError) as err:
        extract(tool, text)
    assert words in err.value.what
    assert err.value.hint


def test_condition_coordinates_are_never_a_goto_target():
    with pytest.raises(ArgumentError):
        extract('goto_waypoint', 'when within 50 m of 47.3990, 8.5470 take a photo')


def test_a_speed_is_no_goto_altitude_and_hold_and_orbit_need_no_values():
    assert extract('goto_waypoint', 'fly to 47.3985, 8.5466 at 4 m/s').altitude_m is None
    assert extract('hold_position', 'hold position').duration_s is None
    orbit = extract('orbit_point', 'orbit here')
    assert (orbit.radius_m, orbit.duration_s, orbit.lat) == (None, None, None)


def test_tools_without_arguments():
    assert not takes_arguments('land')
    assert extract('land', 'land at 47.1, 8.2').model_dump(exclude_defaults=True) == {}


@pytest.mark.parametrize('text, tool', [
    ('climb by 10 m', 'set_altitude'), ('climb another 15 m', 'set_altitude'),
    ('go 20 m higher', 'set_altitude'), ('descend 10 metres', 'set_altitude'),
    ('drop 5 m', 'set_altitude'), ('go up 5 m', 'set_altitude'),
    ('lower the drone 3 m', 'set_altitude'),
    ('turn left 45 degrees', 'set_heading'), ('turn right 90', 'set_heading'),
    ('yaw 90 degrees', 'set_heading'), ('turn 90 degrees clockwise', 'set_heading'),
    ('speed up by 2 m/s', 'set_speed'), ('go 2 m/s faster', 'set_speed'),
])
def test_a_change_is_refused_not_read_as_a_target(text, tool):
    """At 50 m, "descend 10 m" is not "go to 10 m": a change is never sent as a target."""
    with pytest.raises(ArgumentError) as err:
        extract(tool, text)
    assert 'is a change of' in err.value.what and 'not a target' in err.value.what


def test_a_change_of_altitude_in_a_goto_is_no_target_altitude():
    args = extract('goto_waypoint', 'fly to 47.39, 8.54 and go 10 m higher')
    assert (args.lat, args.lon, args.altitude_m) == (47.39, 8.54, None)
