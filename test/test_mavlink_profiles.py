"""The autopilot profiles (pure): mode numbers, PX4's packing, arming rules, AMSL altitudes.

The mode tables are checked against pymavlink's own (mavutil.mode_mapping_acm and
interpret_px4_mode), a source written apart from ours.
"""
from __future__ import annotations

import os

import pytest

os.environ.setdefault('MAVLINK20', '1')  # before pymavlink is first imported
from tool_router.executor.autopilots import (MAV_FRAME_GLOBAL_INT,
                                             MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, ProfileError,
                                             ardupilot_profile, detect, px4_custom_mode,
                                             px4_profile, px4_unpack)

mavutil = pytest.importorskip('pymavlink.mavutil')


def test_arducopter_mode_numbers_agree_with_pymavlink():
    ac = ardupilot_profile()
    for number, name in mavutil.mode_mapping_acm.items():
        if name in ac.modes():
            assert ac.mode_name(number) == name
            assert ac.set_mode_params(name) == [1.0, float(number)]
    assert ac.mode_name(99) == 'MODE_99'


@pytest.mark.parametrize('name, pymavlink_name', [
    ('AUTO_LOITER', 'LOITER'), ('AUTO_TAKEOFF', 'TAKEOFF'), ('AUTO_RTL', 'RTL'),
    ('AUTO_LAND', 'LAND'), ('AUTO_MISSION', 'MISSION'), ('POSCTL', 'POSCTL'),
    ('ALTCTL', 'ALTCTL'), ('MANUAL', 'MANUAL'), ('OFFBOARD', 'OFFBOARD')])
def test_px4_packing_agrees_with_pymavlink(name, pymavlink_name):
    px4 = px4_profile()
    _, main, sub = mavutil.px4_map.get(pymavlink_name, (0, None, None))
    params = px4.set_mode_params(name)
    assert params[0] == 1.0  # MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
    custom = px4_custom_mode(int(params[1]), int(params[2]))
    assert mavutil.interpret_px4_mode(0, custom) == pymavlink_name
    assert px4.mode_name(custom) == name
    if main is not None:
        assert (int(params[1]), int(params[2])) == (main, sub)


def test_px4_custom_mode_bits():
    assert px4_custom_mode(4, 3) == 0x03040000  # main in bits 16-23, sub in 24-31
    assert px4_unpack(0x03040000) == (4, 3)


def test_detect_from_heartbeat():
    assert detect(3, 2) == 'ardupilot'  # ArduPilot, quadrotor
    assert detect(12, 2) == 'px4'
    assert detect(3, 1) is None  # ArduPlane numbers its modes differently
    assert detect(8, 30) is None  # a camera (MAV_AUTOPILOT_INVALID)


def test_arducopter_flies_our_commands_in_guided():
    ac = ardupilot_profile()
    assert ac.mode_for('arm', 'STABILIZE') == 'GUIDED'
    assert ac.mode_for('arm', 'RTL') == 'GUIDED'  # the second flight after an RTL
    assert ac.mode_for('takeoff', 'GUIDED') == ''
    assert ac.mode_for('goto', 'LOITER') == 'GUIDED'
    assert ac.mode_for('hold', 'AUTO') == ''  # AUTO pauses itself
    assert ac.mode_for('land', 'GUIDED') == ''  # NAV_LAND switches to LAND itself
    assert not ac.can_arm_in('RTL') and not ac.can_arm_in('LAND') and ac.can_arm_in('GUIDED')


def test_px4_switches_only_to_arm_out_of_return_or_land():
    px4 = px4_profile()
    assert px4.mode_for('arm', 'AUTO_RTL') == 'AUTO_LOITER'
    assert px4.mode_for('arm', 'AUTO_LAND') == 'AUTO_LOITER'
    assert px4.mode_for('arm', 'AUTO_LOITER') == ''
    assert px4.mode_for('takeoff', 'AUTO_LOITER') == ''  # NAV_TAKEOFF switches to Takeoff
    assert px4.mode_after['takeoff'] == 'AUTO_TAKEOFF'
    assert px4.mode_after['goto'] == 'AUTO_LOITER'


def test_altitudes_above_home_for_arducopter_amsl_for_px4():
    ac, px4 = ardupilot_profile(), px4_profile()
    home = 488.0
    target = ac.altitude(20.0, home)
    assert ac.takeoff_param7(target) == 20.0
    assert ac.reposition_frame_z(ac.altitude(25.0, home)) == (MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
                                                              25.0)
    assert px4.takeoff_param7(px4.altitude(20.0, home)) == 508.0
    assert px4.reposition_frame_z(px4.altitude(25.0, home)) == (MAV_FRAME_GLOBAL_INT, 513.0)
    assert target.describe() == '20 m above home (508.0 m AMSL)'


def test_px4_refuses_without_home_altitude_and_below_minimum_takeoff():
    px4 = px4_profile(min_takeoff_m=2.5)
    with pytest.raises(ProfileError) as err:
        px4.altitude(20.0, None)
    assert err.value.failure_mode == 'no_home'
    with pytest.raises(ProfileError) as err:
        px4.check_takeoff(2.0)
    assert err.value.failure_mode == 'outside_limits' and '2.5 m' in err.value.reason
    px4.check_takeoff(2.5)
    assert ardupilot_profile().altitude(20.0, None).amsl_m is None  # ArduCopter needs no home
