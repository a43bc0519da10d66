"""Real MAVLink over UDP on 127.0.0.1: the executor's link against the strict simulator.

Each test gets a free UDP port and a fresh simulator following ArduCopter's or PX4's rules
(test/mavlink_rig.py). The pipeline is the executor's own; only the operator who approves
confirmations is a stand-in.
"""
from __future__ import annotations

import pytest

pytest.importorskip('pymavlink')

from mavlink_rig import make_rig, wait_for  # noqa: E402
from tool_router.common.conditions import decode_reading, parse_condition  # noqa: E402
from tool_router.common.paths import config_path  # noqa: E402
from tool_router.executor.config import load_executor_config  # noqa: E402
from tool_router.executor.dispatch import parse_binding  # noqa: E402
from tool_router.executor.mavlink import MavlinkSampler  # noqa: E402
from tool_router.executor.traces import WatchRecord  # noqa: E402
from tool_router.executor.watches import WatchManager  # noqa: E402

M = pytest.importorskip('pymavlink.mavutil').mavlink
pytestmark = pytest.mark.slow  # seconds of simulated flight over UDP; the fast tier skips it
PROFILES = ['ardupilot', 'px4']


@pytest.fixture(params=PROFILES)
def rig(request, catalog):
    rig = make_rig(catalog, request.param)
    yield rig
    rig.close()


@pytest.fixture
def ardupilot(catalog):
    rig = make_rig(catalog, 'ardupilot')
    yield rig
    rig.close()


def test_shipped_mavlink_config_binds_every_tool_and_says_which_stay_on_ros(catalog):
    config = load_executor_config(config_path('executor_mavlink.yaml'))
    bindings = config.parsed_bindings()
    assert set(bindings) == set(catalog.names)
    assert config.uses_mavlink()
    assert bindings['emergency_stop'].spec == 'mavlink:terminate'
    assert bindings['wind_estimate'].kind.value == 'trigger'
    assert config.mavlink.autopilot == 'auto' and not config.mavlink.require_signed
    assert config.call_timeout_s >= 30  # take-off and goto answer once the vehicle is there


def test_unknown_mavlink_binding_name_is_a_config_error():
    from tool_router.common.errors import ConfigError
    with pytest.raises(ConfigError, match='not a MAVLink binding'):
        parse_binding('mavlink:do_a_barrel_roll')


def test_autopilot_is_recognised_from_its_heartbeat(rig):
    profile = rig.link.profile()
    assert profile is not None and profile.name == rig.sim.autopilot
    assert rig.link.mode() == ('AUTO_LOITER' if rig.sim.px4 else 'STABILIZE')
    assert any('autopilot ' + profile.label in e for e in rig.events), rig.events


def test_refusals_are_traced_with_their_mav_result(rig):
    sim = rig.sim
    # take-off while disarmed: refused before sending (PX4 would accept it and climb at arming)
    _, t = rig.run(['takeoff'], 'take off to 10 m')
    assert (t['takeoff'].outcome, t['takeoff'].failure_mode) == ('failed', 'not_ready')
    assert 'MAV_CMD_NAV_TAKEOFF' not in rig.flight_commands()
    with sim.lock:
        sim.state.battery_pct = 12.0
    _, t = rig.run(['arm_motors'], 'arm')
    # ArduCopter answers a failed arming check FAILED, PX4 TEMPORARILY_REJECTED
    expected = 'mav_temporarily_rejected' if sim.px4 else 'mav_failed'
    assert t['arm_motors'].failure_mode == expected, t['arm_motors'].message
    assert 'battery' in t['arm_motors'].message.lower()  # the vehicle's STATUSTEXT is quoted
    sim.force_results[M.MAV_CMD_DO_GRIPPER] = M.MAV_RESULT_UNSUPPORTED
    _, t = rig.run(['payload_release'], 'drop the payload')
    assert t['payload_release'].failure_mode == 'mav_unsupported'
    sim.force_results[M.MAV_CMD_MISSION_START] = M.MAV_RESULT_DENIED
    _, t = rig.run(['execute_mission'], 'start the mission')
    assert t['execute_mission'].failure_mode == 'mav_denied'
    sim.force_results[M.MAV_CMD_VIDEO_START_CAPTURE] = 6  # MAV_RESULT_CANCELLED
    _, t = rig.run(['video_recorder'], 'record video')
    assert t['video_recorder'].failure_mode == 'mav_cancelled'


def test_in_progress_then_accepted(ardupilot):
    _, t = ardupilot.run(['video_recorder'], 'start recording video')
    assert t['video_recorder'].outcome == 'dispatched'
    assert 'VIDEO_START_CAPTURE (start): accepted' in t['video_recorder'].message
    assert ardupilot.sim.snapshot()['recording'] is True
    _, t = ardupilot.run(['video_recorder'], 'stop the video')
    assert 'VIDEO_STOP_CAPTURE' in t['video_recorder'].message
    assert ardupilot.sim.snapshot()['recording'] is False


def test_no_ack_is_a_timeout_not_a_hang(ardupilot):
    ardupilot.sim.silence(1.2)  # shorter than the heartbeat timeout: the link still counts as up
    _, t = ardupilot.run(['rgb_camera'], 'take a photo')
    assert t['rgb_camera'].failure_mode == 'ack_timeout'
    assert 'no COMMAND_ACK within 1 s' in t['rgb_camera'].message  # the ACK budget, not 30 s
    assert ardupilot.sim.snapshot()['images'] == 1  # it went out; only the answer was lost


def test_heartbeat_loss_blocks_motion_and_is_traced(rig):
    rig.sim.silence(30.0)
    assert wait_for(rig.link.link_lost, timeout_s=30.0)
    record, t = rig.run(['arm_motors', 'takeoff', 'link_quality'], 'arm and take off to 10 m')
    assert t['arm_motors'].failure_mode == 'heartbeat_lost'
    assert 'nothing sent' in t['arm_motors'].message
    assert t['takeoff'].outcome == 'skipped_after_failure'
    reading = decode_reading(t['link_quality'].message)
    assert reading['link_lost'] is True
    assert 'MAV_CMD_COMPONENT_ARM_DISARM' not in rig.flight_commands()


def test_missing_argument_and_limits_refuse_before_sending(rig):
    _, t = rig.run(['set_altitude'], 'change the altitude a bit')
    assert t['set_altitude'].failure_mode == 'missing_argument'
    assert 'nothing sent' in t['set_altitude'].message
    _, t = rig.run(['goto_waypoint'], 'fly to 47.5000, 8.5456')
    assert t['goto_waypoint'].failure_mode == 'outside_limits'
    assert 'geofence' in t['goto_waypoint'].message
    _, t = rig.run(['takeoff'], 'take off to 500 m')
    assert t['takeoff'].failure_mode == 'outside_limits'
    assert rig.flight_commands() == []


def test_emergency_stop_goes_out_even_without_heartbeat(rig):
    record, _ = rig.run(['arm_motors'], 'arm')
    assert record.tools[0].outcome == 'dispatched', record.tools
    rig.sim.silence(30.0)  # the vehicle still hears us but sends nothing
    assert wait_for(rig.link.link_lost, timeout_s=30.0)
    _, t = rig.run(['takeoff'], 'take off')
    assert t['takeoff'].failure_mode == 'heartbeat_lost'
    _, t = rig.run(['emergency_stop'], 'emergency stop now')
    assert rig.sim.snapshot()['terminated'] is True  # sent although the link counts as lost
    assert t['emergency_stop'].failure_mode == 'ack_timeout'  # and traced: no answer came
    assert 'MAV_CMD_NAV_TAKEOFF' not in rig.flight_commands()


def test_condition_watch_samples_mavlink_telemetry(rig):
    """The battery loop: 'land when the battery drops below 25%' over MAVLink."""
    record, _ = rig.run(['arm_motors', 'takeoff'], 'arm and take off to 10 m')
    assert [t.outcome for t in record.tools] == ['dispatched'] * 2, record.tools
    fired = []
    events: list[WatchRecord] = []
    manager = WatchManager(MavlinkSampler(rig.link), fired.append, events.append)
    predicate = parse_condition('when the battery drops below 25%', ['battery_status'])
    manager.arm('loop', 'land', predicate, 'land when the battery drops below 25%')
    manager.tick()
    assert not fired and rig.link.read('battery_status')['battery_pct'] > 25
    with rig.sim.lock:
        rig.sim.state.battery_pct = 24.0
    assert wait_for(lambda: manager.tick() or fired, timeout_s=30.0)
    record, t = rig.run([fired[0].tool], fired[0].request_text)
    assert t['land'].outcome == 'dispatched', t['land'].message
    assert [e.event for e in events] == ['armed', 'fired']
    assert wait_for(lambda: rig.state().get('phase') == 'disarmed', timeout_s=30.0)


def test_a_gps_loss_watch_fires_when_the_autopilot_reports_no_fix(rig):
    # "if gps is lost, land": GPS_RAW_INT's fix_type below 3 on either autopilot
    record, _ = rig.run(['arm_motors', 'takeoff'], 'arm and take off to 10 m')
    assert [t.outcome for t in record.tools] == ['dispatched'] * 2, record.tools
    fired: list = []
    manager = WatchManager(MavlinkSampler(rig.link), fired.append, lambda _: None)
    predicate = parse_condition('if gps is lost', ['gps_position'])
    assert predicate.field == 'gps_fix'
    manager.arm('gps', 'land', predicate, 'if gps is lost, land')
    assert wait_for(lambda: rig.link.read('gps_position').get('gps_fix') is True)
    manager.tick()
    assert not fired
    with rig.sim.lock:
        rig.sim.state.gps_ok = False
    assert wait_for(lambda: manager.tick() or fired, timeout_s=30.0)
    assert fired[0].tool == 'land'


def test_a_satellite_count_watch_reads_gps_raw_int(rig):
    # "sats < 8 -> land": GPS_RAW_INT's satellites_visible on either autopilot
    fired: list = []
    manager = WatchManager(MavlinkSampler(rig.link), fired.append, lambda _: None)
    predicate = parse_condition('if sats < 8', ['gps_position'])
    assert (predicate.field, predicate.op, predicate.threshold) == ('satellites', '<', 8.0)
    manager.arm('sats', 'land', predicate, 'sats < 8 -> land')
    assert wait_for(lambda: rig.link.read('gps_position').get('satellites') == 14)
    manager.tick()
    assert not fired
    with rig.sim.lock:
        rig.sim.state.satellites = 5
    assert wait_for(lambda: manager.tick() or fired, timeout_s=30.0)
    assert fired[0].tool == 'land'


def test_hold_is_a_pause_on_arducopter_and_the_hold_mode_on_px4(rig):
    record, _ = rig.run(['arm_motors', 'takeoff'], 'arm and take off to 10 m')
    assert [t.outcome for t in record.tools] == ['dispatched'] * 2, record.tools
    _, t = rig.run(['return_to_home'], 'return home')
    assert t['return_to_home'].outcome == 'dispatched'
    _, t = rig.run(['hold_position'], 'hold position')
    assert t['hold_position'].outcome == 'dispatched', t['hold_position'].message
    if rig.sim.px4:  # PX4 has no pause command: Hold is a mode
        assert t['hold_position'].message.startswith('MAV_CMD_DO_SET_MODE AUTO_LOITER')
        assert 'switched from AUTO_RTL first; the request asked for it' in \
            t['hold_position'].message
        assert 'MAV_CMD_DO_PAUSE_CONTINUE' not in rig.flight_commands()
        _, t = rig.run(['hold_position'], 'hold position')
        assert t['hold_position'].message.startswith('already in AUTO_LOITER (hold position)')
    else:  # out of RTL into GUIDED, then GUIDED's pause
        assert t['hold_position'].message.startswith('MAV_CMD_DO_PAUSE_CONTINUE (pause: hold')
        assert 'switched from RTL first' in t['hold_position'].message
    assert wait_for(lambda: rig.state().get('mode') in ('GUIDED', 'AUTO_LOITER'))
    assert rig.state()['phase'] == 'airborne'
