"""The link believes the autopilot only: components, sequences, ACK addressing, reboots, streams.

Real UDP on 127.0.0.1 against the strict simulator (test/mavlink_rig.py); the intruder is a
separate socket on the same network (no signing here: test_mavlink_spoof.py has that).
"""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip('pymavlink')

from mavlink_rig import Intruder, make_rig, wait_for  # noqa: E402
from tool_router.common.conditions import parse_condition  # noqa: E402
from tool_router.executor.mavlink import MavlinkSampler  # noqa: E402
from tool_router.executor.watches import WatchManager  # noqa: E402

M = pytest.importorskip('pymavlink.mavutil').mavlink
pytestmark = pytest.mark.slow
ARM = M.MAV_CMD_COMPONENT_ARM_DISARM


@pytest.fixture(params=['ardupilot', 'px4'])
def rig(request, catalog):
    rig = make_rig(catalog, request.param)
    yield rig
    rig.close()


def test_the_camera_component_is_listed_but_never_read_as_the_vehicle(rig):
    record, _ = rig.run(['arm_motors', 'takeoff'], 'arm and take off to 10 m')
    assert [t.outcome for t in record.tools] == ['dispatched'] * 2
    time.sleep(2.5)  # a few camera HEARTBEATs (type CAMERA, autopilot INVALID, all disarmed)
    state = rig.link.read('vehicle_state')
    assert state['armed'] is True and state['phase'] == 'airborne'
    assert state['mode'] == ('AUTO_LOITER' if rig.sim.px4 else 'GUIDED')
    link = rig.link.read('link_quality')
    assert link['components'] == '100'
    assert link['packet_loss_pct'] == 0.0  # sequences counted per component: nothing lost


def test_autopilot_silent_while_the_camera_beats_is_a_lost_link(rig):
    rig.sim.silence_autopilot(30.0)
    assert wait_for(rig.link.link_lost, timeout_s=30.0)
    assert rig.link.read('link_quality')['components'] == '100'  # the camera is still there
    _, t = rig.run(['arm_motors'], 'arm')
    assert t['arm_motors'].failure_mode == 'heartbeat_lost'  # refused, not sent into the void
    assert 'MAV_CMD_COMPONENT_ARM_DISARM' not in rig.flight_commands()
    _, t = rig.run(['rgb_camera'], 'take a photo')  # the camera answers for itself
    assert t['rgb_camera'].outcome == 'dispatched'


def test_acks_for_another_ground_station_or_from_another_component_are_ignored(rig):
    other_gcs = Intruder(rig.port, system=1, component=1)  # the vehicle's ids, a stray ACK
    camera = Intruder(rig.port, system=1, component=100)
    stop = threading.Event()

    def flood():
        while not stop.is_set():
            other_gcs.ack(ARM, M.MAV_RESULT_DENIED, target_system=254, target_component=190)
            camera.ack(ARM, M.MAV_RESULT_DENIED)  # addressed to us, but not from the autopilot
            time.sleep(0.01)

    thread = threading.Thread(target=flood)
    thread.start()
    try:
        _, t = rig.run(['arm_motors'], 'arm')
    finally:
        stop.set()
        thread.join()
        other_gcs.close()
        camera.close()
    assert t['arm_motors'].outcome == 'dispatched', t['arm_motors'].message
    assert rig.sim.snapshot()['armed'] is True
    counters = rig.link.counters
    assert counters['acks_not_for_us'] > 0  # addressed to ground station 254
    assert counters['acks_ignored'] > counters['acks_not_for_us']  # and the camera's
    assert rig.link.read('link_quality')['acks_ignored'] == counters['acks_ignored']


def test_a_reboot_command_is_seen_and_streams_are_requested_again(rig):
    sim, link = rig.sim, rig.link
    before = link.counters['stream_requests']
    result, _ = link.command(M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, [1.0], 2.0)
    assert result == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: sim.snapshot()['boots'] == 2)
    assert wait_for(lambda: link.counters['stream_requests'] > before, timeout_s=30.0)
    assert wait_for(lambda: link.latest('BATTERY_STATUS') is not None, timeout_s=30.0)
    if sim.px4:  # PX4 streams again by itself: its boot time going back says it rebooted
        assert wait_for(lambda: link.counters['reboots'] == 1, timeout_s=10.0)
        assert any('rebooted' in event for event in rig.events), rig.events


def test_while_telemetry_is_missing_readings_and_watches_say_so_and_resume(rig):
    sim, link = rig.sim, rig.link
    watches = WatchManager(MavlinkSampler(link), lambda w: None, lambda r: None)
    watches.arm('r', 'land', parse_condition('when the battery drops below 5%',
                                             ['battery_status']), 'land below 5%')
    watches.tick()
    (watch,) = watches.armed()
    assert watch.samples == 1 and watch.last_error == ''
    before = link.counters['stream_requests']
    sim.reboot(down_s=5.0)  # longer than stale_after_s: the cached telemetry runs out

    def watch_error():
        watches.tick()
        return watches.armed()[0].last_error

    assert wait_for(lambda: 'no telemetry' in watch_error(), timeout_s=30.0)
    _, t = rig.run(['battery_status'], 'battery?')
    assert (t['battery_status'].outcome, t['battery_status'].failure_mode) == \
        ('failed', 'no_telemetry')
    # the HEARTBEAT comes back; the link asks again (ArduCopter streams nothing until asked)
    assert wait_for(lambda: watch_error() == '', timeout_s=30.0)
    assert watches.armed()[0].samples > 1 and watches.armed()[0].state == 'armed'
    assert wait_for(lambda: link.counters['stream_requests'] > before, timeout_s=30.0)
    assert any('HEARTBEAT back after' in event for event in rig.events), rig.events


def test_streams_switched_off_while_the_heartbeat_goes_on_are_requested_again(catalog):
    rig = make_rig(catalog, 'ardupilot')
    try:
        for msg_id in (M.MAVLINK_MSG_ID_GLOBAL_POSITION_INT, M.MAVLINK_MSG_ID_SYS_STATUS):
            result, _ = rig.link.command(M.MAV_CMD_SET_MESSAGE_INTERVAL, [float(msg_id), -1.0],
                                         2.0)  # as another ground station might
            assert result == M.MAV_RESULT_ACCEPTED
        # both were switched off: the link names whichever it missed first
        assert wait_for(lambda: any(
            'requested again (no GLOBAL_POSITION_INT' in event
            or 'requested again (no SYS_STATUS' in event for event in rig.events),
            timeout_s=30.0), rig.events
        assert wait_for(lambda: rig.link.latest('GLOBAL_POSITION_INT') is not None)
        assert not rig.link.link_lost()
    finally:
        rig.close()


def test_old_ardupilot_without_set_message_interval_gets_request_data_stream(catalog):
    rig = make_rig(catalog, 'ardupilot', sim_kwargs={'legacy_streams': True})
    try:
        assert rig.link.latest('BATTERY_STATUS') is not None
        assert any('REQUEST_DATA_STREAM sent' in event for event in rig.events), rig.events
    finally:
        rig.close()


def test_telemetry_and_link_health_follow_the_autopilot_and_its_silence(rig):
    """The link's standard telemetry (NED read as ENU) and its diagnostics level."""
    import math

    from tool_router.common.telemetry import enu_offset
    from tool_router.executor.mavlink_telemetry import link_health, link_telemetry
    record, _ = rig.run(['arm_motors', 'takeoff'], 'arm and take off to 10 m')
    assert [t.outcome for t in record.tools] == ['dispatched'] * 2
    assert wait_for(lambda: (rig.altitude() or 0.0) > 9.0, timeout_s=30.0)
    t = link_telemetry(rig.link)
    snap = rig.sim.snapshot()
    assert t.missing == ()
    assert (t.status.source, t.status.armed, t.status.phase) == ('mavlink', True, 'airborne')
    assert t.status.autopilot == ('PX4' if rig.sim.px4 else 'ArduCopter')
    assert t.battery.percentage == pytest.approx(snap['battery_pct'], abs=1.0)
    assert t.fix.fix_type == 3 and t.fix.satellites == 14 and not t.fix.ellipsoid
    east, north = enu_offset(snap['lat'], snap['lon'], *rig.sim.home[:2])
    assert (t.pose.x, t.pose.y, t.pose.z) == (pytest.approx(east, abs=2.0),
                                              pytest.approx(north, abs=2.0),
                                              pytest.approx(snap['alt'], abs=1.0))
    heading = snap['heading']  # compass degrees; ENU yaw is 90 degrees minus it
    expected = math.radians((90.0 - heading) % 360.0)
    got = t.pose.yaw_rad % (2 * math.pi)
    assert min(abs(got - expected), 2 * math.pi - abs(got - expected)) < 0.05
    health = link_health(rig.link)
    assert health.level == 'OK', health.message
    assert health.values['signing'] == 'off' and health.values['heartbeat_age_s']
    rig.sim.silence_autopilot(30.0)
    assert wait_for(rig.link.link_lost, timeout_s=30.0)
    lost = link_health(rig.link)
    assert lost.level == 'ERROR' and 'heartbeat lost' in lost.message
    assert link_telemetry(rig.link).status.link_lost is True
