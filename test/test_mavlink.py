"""Real MAVLink over UDP on 127.0.0.1: the executor's link against the MAVLink simulator.

Each test gets a free UDP port; the simulator sends to it (udpout) and the
executor's link listens on it (udpin), as with a real autopilot. The pipeline is
the executor's own; only the operator who approves confirmations is a stand-in.
"""
from __future__ import annotations

import socket
import time

import pytest

pytest.importorskip('pymavlink')

from tool_router.executor.config import load_executor_config  # noqa: E402
from tool_router.common.conditions import decode_reading, parse_condition  # noqa: E402
from tool_router.executor.dispatch import parse_binding  # noqa: E402
from tool_router.executor.mavlink import (KindRouter, MavlinkDispatcher, MavlinkSampler,  # noqa: E402
                                          MavlinkLink, SensorUnavailable)
from tool_router.sim.autopilot import MavlinkSim  # noqa: E402
from tool_router.executor.permissions import PermissionPolicy, load_permissions  # noqa: E402
from tool_router.executor.pipeline import ExecutionPipeline  # noqa: E402
from tool_router.executor.traces import ConfirmationOutcome, WatchRecord  # noqa: E402
from tool_router.executor.watches import WatchManager  # noqa: E402
from tool_router.common.paths import config_path  # noqa: E402
from fakes import make_selection

M = pytest.importorskip('pymavlink.mavutil').mavlink
pytestmark = pytest.mark.slow  # about 25 s of simulated flight over UDP; the fast tier skips it


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


def wait_for(predicate, timeout_s=15.0, step=0.05):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


class Approver:
    """The operator: approves every confirmation (arm, emergency stop are 'critical')."""

    def __init__(self):
        self.asked = []

    def confirm(self, requests):
        self.asked += [r.tool for r in requests]
        return {r.tool: ConfirmationOutcome(outcome='approved', operator_name='op')
                for r in requests}


class NoRos:
    def dispatch(self, tool, binding, request_id, request_text, timeout_s):
        raise AssertionError(f'{tool} ({binding.spec}) should not leave MAVLink here')


@pytest.fixture
def rig(catalog):
    port = free_udp_port()
    config = load_executor_config(config_path('executor_mavlink.yaml'))
    config.mavlink.connection = f'udpin:127.0.0.1:{port}'
    config.mavlink.ack_timeout_s = 1.0
    config.mavlink.heartbeat_timeout_s = 1.5
    sim = MavlinkSim(f'udpout:127.0.0.1:{port}', climb_mps=10.0, cruise_mps=15.0).start()
    link = MavlinkLink(config.mavlink)
    assert link.wait_heartbeat(10.0), 'no heartbeat from the simulator over UDP'
    rules = load_permissions(config.resolved_permissions(), catalog)
    approver = Approver()
    pipe = ExecutionPipeline(catalog, PermissionPolicy(rules, catalog), config.parsed_bindings(),
                             approver, KindRouter(MavlinkDispatcher(link), NoRos()),
                             call_timeout_s=3.0)
    yield pipe, sim, link, approver
    link.close()
    sim.stop()


def run(pipe, tools, text, rid='r'):
    record = pipe.process(make_selection(rid, request_text=text, tools=tools,
                                    scores=[0.9] * len(tools)))
    return record, {t.tool: t for t in record.tools}


def altitude(link):
    try:
        return link.read('altitude_sensor')['altitude_m']
    except SensorUnavailable:
        return None


def test_shipped_mavlink_config_binds_every_tool_and_says_which_stay_on_ros(catalog):
    config = load_executor_config(config_path('executor_mavlink.yaml'))
    bindings = config.parsed_bindings()
    assert set(bindings) == set(catalog.names)
    assert config.uses_mavlink()
    assert bindings['emergency_stop'].spec == 'mavlink:terminate'
    assert bindings['wind_estimate'].kind.value == 'trigger'


def test_unknown_mavlink_binding_name_is_a_config_error():
    from tool_router.common.errors import ConfigError
    with pytest.raises(ConfigError, match='not a MAVLink binding'):
        parse_binding('mavlink:do_a_barrel_roll')


def test_full_flight_arm_takeoff_goto_photo_rtl(rig):
    pipe, sim, link, approver = rig
    text = ('arm, take off to 20 m, fly to 47.3980, 8.5460 at 25 m, take a photo and '
            'return home')
    tools = ['arm_motors', 'takeoff', 'goto_waypoint', 'rgb_camera', 'return_to_home']
    # arm and take off first; the goto is refused until the climb-out ends
    record, t = run(pipe, tools[:2], text, 'flight-1')
    assert [x.outcome for x in record.tools] == ['dispatched', 'dispatched'], record.tools
    assert 'MAV_CMD_NAV_TAKEOFF to 20 m: accepted' in t['takeoff'].message
    assert approver.asked == ['arm_motors']
    # at 19.96 m the simulator has ended its climb-out (it refuses a goto before)
    assert wait_for(lambda: (altitude(link) or 0) > 19.96)
    record, t = run(pipe, tools[2:], text, 'flight-2')
    assert record.stop_reason == 'completed', record.tools
    assert 'MAV_CMD_DO_REPOSITION to 47.398000,8.546000 at 25 m: accepted' in \
        t['goto_waypoint'].message
    assert t['rgb_camera'].message.startswith('MAV_CMD_IMAGE_START_CAPTURE')
    assert sim.snapshot()['images'] == 1
    # RTL flies home and lands; the telemetry says so
    assert wait_for(lambda: link.read('vehicle_state')['on_ground'], timeout_s=30.0)
    state = link.read('vehicle_state')
    assert state['mode'] == 'LAND' and state['armed']
    assert link.read('gps_position')['home_distance_m'] < 2.0
    assert sim.snapshot()['commands'][:2] == ['MAV_CMD_COMPONENT_ARM_DISARM',
                                              'MAV_CMD_NAV_TAKEOFF']


def test_refusals_are_traced_with_their_mav_result(rig):
    pipe, sim, link, _ = rig
    _, t = run(pipe, ['takeoff'], 'take off to 10 m')
    assert (t['takeoff'].outcome, t['takeoff'].failure_mode) == ('failed',
                                                                 'mav_temporarily_rejected')
    sim.state.battery_pct = 12.0
    _, t = run(pipe, ['arm_motors'], 'arm')
    assert t['arm_motors'].failure_mode == 'mav_denied'
    assert 'denied by the vehicle' in t['arm_motors'].message
    sim.force_results[M.MAV_CMD_DO_GRIPPER] = M.MAV_RESULT_UNSUPPORTED
    _, t = run(pipe, ['payload_release'], 'drop the payload')
    assert t['payload_release'].failure_mode == 'mav_unsupported'
    sim.force_results[M.MAV_CMD_MISSION_START] = M.MAV_RESULT_FAILED
    _, t = run(pipe, ['execute_mission'], 'start the mission')
    assert t['execute_mission'].failure_mode == 'mav_failed'
    sim.force_results[M.MAV_CMD_VIDEO_START_CAPTURE] = 6  # MAV_RESULT_CANCELLED
    _, t = run(pipe, ['video_recorder'], 'record video')
    assert t['video_recorder'].failure_mode == 'mav_cancelled'


def test_in_progress_then_accepted(rig):
    pipe, sim, _, _ = rig
    _, t = run(pipe, ['video_recorder'], 'start recording video')
    assert t['video_recorder'].outcome == 'dispatched'
    assert 'VIDEO_START_CAPTURE (start): accepted' in t['video_recorder'].message
    assert sim.snapshot()['recording'] is True
    _, t = run(pipe, ['video_recorder'], 'stop the video')
    assert 'VIDEO_STOP_CAPTURE' in t['video_recorder'].message
    assert sim.snapshot()['recording'] is False


def test_no_ack_is_a_timeout_not_a_hang(rig):
    pipe, sim, link, _ = rig
    sim.silence(1.2)  # shorter than the heartbeat timeout: the link still counts as up
    _, t = run(pipe, ['rgb_camera'], 'take a photo')
    assert t['rgb_camera'].failure_mode == 'ack_timeout'
    # the 1 s ACK budget was the wait, not the 3 s call budget
    assert 'no COMMAND_ACK within 1 s' in t['rgb_camera'].message
    assert sim.snapshot()['images'] == 1  # it went out; only the answer was lost


def test_heartbeat_loss_blocks_motion_and_is_traced(rig):
    pipe, sim, link, _ = rig
    sim.silence(30.0)
    assert wait_for(link.link_lost, timeout_s=30.0)
    record, t = run(pipe, ['arm_motors', 'takeoff', 'link_quality'], 'arm and take off to 10 m')
    assert t['arm_motors'].failure_mode == 'heartbeat_lost'
    assert 'nothing sent' in t['arm_motors'].message
    assert t['takeoff'].outcome == 'skipped_after_failure'
    reading = decode_reading(t['link_quality'].message)
    assert reading['link_lost'] is True
    assert 'MAV_CMD_COMPONENT_ARM_DISARM' not in sim.snapshot()['commands']


def test_missing_argument_and_limits_refuse_before_sending(rig):
    pipe, sim, link, _ = rig
    _, t = run(pipe, ['set_altitude'], 'change the altitude a bit')
    assert t['set_altitude'].failure_mode == 'missing_argument'
    assert 'nothing sent' in t['set_altitude'].message
    _, t = run(pipe, ['goto_waypoint'], 'fly to 47.5000, 8.5456')
    assert t['goto_waypoint'].failure_mode == 'outside_limits'
    assert 'geofence' in t['goto_waypoint'].message
    _, t = run(pipe, ['takeoff'], 'take off to 500 m')
    assert t['takeoff'].failure_mode == 'outside_limits'
    assert sim.snapshot()['commands'] == []


def test_emergency_stop_goes_out_even_without_heartbeat(rig):
    pipe, sim, link, approver = rig
    run(pipe, ['arm_motors'], 'arm')
    sim.silence(30.0)  # the vehicle still hears us but sends nothing
    assert wait_for(link.link_lost, timeout_s=30.0)
    _, t = run(pipe, ['takeoff'], 'take off')
    assert t['takeoff'].failure_mode == 'heartbeat_lost'
    _, t = run(pipe, ['emergency_stop'], 'emergency stop now')
    assert sim.snapshot()['terminated'] is True  # sent although the link counts as lost
    assert t['emergency_stop'].failure_mode == 'ack_timeout'  # and traced: no answer came
    assert 'MAV_CMD_NAV_TAKEOFF' not in sim.snapshot()['commands']


def test_condition_watch_samples_mavlink_telemetry(rig):
    """The battery loop: 'land when the battery drops below 25%' over MAVLink."""
    pipe, sim, link, _ = rig
    run(pipe, ['arm_motors', 'takeoff'], 'arm and take off to 10 m')
    assert wait_for(lambda: (altitude(link) or 0) > 9.5)
    fired = []
    events: list[WatchRecord] = []
    manager = WatchManager(MavlinkSampler(link), fired.append, events.append)
    predicate = parse_condition('when the battery drops below 25%', ['battery_status'])
    manager.arm('loop', 'land', predicate, 'land when the battery drops below 25%')
    manager.tick()
    assert not fired and link.read('battery_status')['battery_pct'] > 25
    sim.state.battery_pct = 24.0
    assert wait_for(lambda: manager.tick() or fired, timeout_s=30.0)
    record, t = run(pipe, [fired[0].tool], fired[0].request_text)
    assert t['land'].outcome == 'dispatched'
    assert [e.event for e in events] == ['armed', 'fired']
    assert wait_for(lambda: link.read('vehicle_state')['on_ground'], timeout_s=30.0)
