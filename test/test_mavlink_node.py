"""The executor node with config/executor_mavlink.yaml, over DDS and real MAVLink/UDP on 127.0.0.1.

The MAVLink simulator runs in the test process; the executor is a real process
reading the shipped MAVLink parameters file (only the port, trace directory and
permissions are overridden). Selections go in over DDS; the trace files and the
simulator's state say what happened.
"""
from __future__ import annotations

import pytest
from test_executor_nodes import UNSIGNED, RosPeer, outcomes, start, wait_record
from mavlink_rig import free_udp_port, wait_for

pytest.importorskip('pymavlink')
pytestmark = pytest.mark.slow  # starts ROS processes

ALLOW_ALL = """version: 1
defaults: {none: allow, motion: allow, payload: allow, critical: allow}
tools: {}
"""


@pytest.fixture(scope='module')
def rig(tmp_path_factory):
    from tool_router.common.params_files import prepare_params_file
    from tool_router.common.paths import config_path
    from tool_router.sim.autopilot import MavlinkSim

    base = tmp_path_factory.mktemp('mavlink_node')
    perms = base / 'permissions.yaml'
    perms.write_text(ALLOW_ALL)
    port = free_udp_port()
    sim = MavlinkSim(f'udpout:127.0.0.1:{port}', climb_mps=10.0, cruise_mps=15.0,
                     drain_pct_per_s=0.0).start()
    # under a namespace of its own (the signed rig's executor is /executor_node), with the
    # shipped file rewritten for it as `tool-router serve --namespace` does
    params = prepare_params_file(config_path('executor_mavlink.yaml'), 'executor_node',
                                 '/mav_plain', ['executor_node'], base)
    executor = start(
        'tool_router.ros.executor_node', '--params-file', params,
        '-p', f'mavlink.connection:=udpin:127.0.0.1:{port}', '-p', f'trace_dir:={base}',
        '-p', f'permissions_file:={perms}', '-p', 'selection_topic:=/test_mav/selected',
        '-p', 'watch_period_s:=0.2', '-r', '__ns:=/mav_plain', *UNSIGNED,
        ready='executor ready')
    # motion commands are refused until the vehicle's first HEARTBEAT: wait for the link
    if not executor.wait_for('vehicle heartbeat seen', 30.0):
        executor.stop()
        sim.stop()
        pytest.fail(f'the executor never saw the simulator\'s heartbeat:\n{executor.output}')
    peer = RosPeer()
    yield {'sim': sim, 'executor': executor, 'peer': peer, 'dir': base, 'port': port}
    peer.close()
    executor.stop()
    sim.stop()


def test_selection_to_mavlink_to_trace_and_the_battery_loop(rig):
    sim, peer, traces = rig['sim'], rig['peer'], rig['dir']
    assert 'MAVLink link on udpin:127.0.0.1:' in rig['executor'].output
    rid = peer.select('/test_mav/selected', ['arm_motors', 'takeoff', 'battery_status'],
                      'arm, take off to 15 m and check the battery')
    record = wait_record(traces, rid, timeout_s=20.0)
    assert outcomes(record) == ['dispatched'] * 3, record['tools']
    assert record['tools'][0]['endpoint'] == 'mavlink:arm'
    assert 'MAV_CMD_NAV_TAKEOFF to 15 m above home (503.0 m AMSL), mode GUIDED: accepted' in \
        record['tools'][1]['message']
    assert wait_for(lambda: sim.snapshot()['alt'] > 14.5)
    # "land when the battery drops below 25%": the watch samples BATTERY_STATUS
    rid = peer.select('/test_mav/selected', ['battery_status', 'land'],
                      'watch the battery and land when it drops below 25%',
                      conditions=['', 'when it drops below 25%'])
    record = wait_record(traces, rid, timeout_s=20.0)
    assert outcomes(record) == ['dispatched', 'armed'], record['tools']
    assert wait_for(lambda: sim.snapshot()['phase'] == 'flying')  # the climb-out has ended
    with sim.lock:
        sim.state.battery_pct = 22.0
    assert wait_for(lambda: sim.snapshot()['phase'] in ('landing', 'ground', 'disarmed'),
                    timeout_s=20.0)
    assert 'MAV_CMD_NAV_LAND' in sim.snapshot()['commands']


def test_missing_coordinates_refused_and_emergency_stop_goes_out(rig):
    sim, peer, traces = rig['sim'], rig['peer'], rig['dir']
    rid = peer.select('/test_mav/selected', ['goto_waypoint'], 'fly to the red barn')
    record = wait_record(traces, rid, timeout_s=20.0)
    assert record['tools'][0]['failure_mode'] == 'missing_argument'
    assert 'MAV_CMD_DO_REPOSITION' not in sim.snapshot()['commands']
    rid = peer.select('/test_mav/selected', ['emergency_stop'], 'emergency stop')
    record = wait_record(traces, rid, timeout_s=20.0)
    assert outcomes(record) == ['dispatched'], record['tools']
    assert sim.snapshot()['terminated'] is True


@pytest.fixture(scope='module')
def signed_rig(tmp_path_factory):
    """The executor process with mavlink.require_signed, against a vehicle holding the same key."""
    from tool_router.common.mavlink_signing import create_mavlink_key, read_mavlink_key
    from tool_router.common.paths import config_path
    from tool_router.sim.autopilot import MavlinkSim

    base = tmp_path_factory.mktemp('mavlink_signed')
    perms = base / 'permissions.yaml'
    perms.write_text(ALLOW_ALL)
    key_file = base / 'keys' / 'mavlink.key'
    create_mavlink_key(key_file)
    port = free_udp_port()
    sim = MavlinkSim(f'udpout:127.0.0.1:{port}', autopilot='px4', climb_mps=10.0,
                     cruise_mps=15.0, drain_pct_per_s=0.0, signing_key=read_mavlink_key(key_file),
                     require_signed=True).start()
    executor = start(
        'tool_router.ros.executor_node', '--params-file',
        str(config_path('executor_mavlink.yaml')),
        '-p', f'mavlink.connection:=udpin:127.0.0.1:{port}', '-p', f'trace_dir:={base}',
        '-p', f'mavlink.signing_key_file:={key_file}', '-p', 'mavlink.require_signed:=true',
        '-p', 'mavlink.security_report_s:=1.0',
        '-p', f'permissions_file:={perms}', '-p', 'selection_topic:=/test_mav_signed/selected',
        *UNSIGNED, ready='executor ready')
    if not executor.wait_for('vehicle heartbeat seen', 30.0):
        executor.stop()
        sim.stop()
        pytest.fail(f'the executor never saw the signed heartbeat:\n{executor.output}')
    peer = RosPeer()
    yield {'sim': sim, 'executor': executor, 'peer': peer, 'dir': base, 'port': port}
    peer.close()
    executor.stop()
    sim.stop()


def test_signed_executor_flies_px4_and_traces_forged_messages_as_security_events(signed_rig):
    from mavlink_rig import Intruder
    from test_executor_nodes import read_records

    sim, peer, traces = signed_rig['sim'], signed_rig['peer'], signed_rig['dir']
    assert 'PX4' in signed_rig['executor'].output and 'unsigned messages refused' in \
        signed_rig['executor'].output
    rid = peer.select('/test_mav_signed/selected', ['arm_motors', 'takeoff'],
                      'arm and take off to 15 m')
    record = wait_record(traces, rid, timeout_s=40.0)
    assert outcomes(record) == ['dispatched'] * 2, record['tools']
    assert 'to 15 m above home (503.0 m AMSL), mode AUTO_TAKEOFF' in record['tools'][1]['message']
    forger = Intruder(signed_rig['port'])
    for _ in range(20):
        forger.battery(5)
    forger.close()

    def refused():
        return [r for r in read_records(traces) if r.get('record') == 'security'
                and r.get('event') == 'mavlink_refused']
    assert wait_for(refused, timeout_s=20.0)
    (event, *_) = refused()
    assert (event['reason'], event['tool'], event['key_id']) == \
        ('unsigned', 'BATTERY_STATUS', 'system 1 component 1')
    assert sim.snapshot()['armed'] is True


def test_the_autopilots_telemetry_as_standard_messages_and_the_link_on_diagnostics(rig):
    """vehicle/battery, fix, pose, status say what the autopilot says; /diagnostics: the link."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import BatteryState, NavSatFix, NavSatStatus
    from tool_router.common.telemetry import enu_offset
    from tool_router.msg import VehicleStatus
    from tool_router.ros.common import latched
    peer, sim = rig['peer'], rig['sim']
    batteries = peer.watch(BatteryState, '/mav_plain/vehicle/battery')
    fixes = peer.watch(NavSatFix, '/mav_plain/vehicle/fix')
    poses = peer.watch(PoseStamped, '/mav_plain/vehicle/pose')
    statuses = peer.watch(VehicleStatus, '/mav_plain/vehicle/status', qos=latched(1))
    diagnostics = peer.watch(DiagnosticArray, '/diagnostics')
    with sim.lock:
        sim.state.battery_pct = 61.0
    assert wait_for(lambda: batteries and abs(batteries[-1].percentage - 0.61) < 1e-6,
                    timeout_s=20.0), [b.percentage for b in batteries[-3:]]
    assert wait_for(lambda: fixes and poses and statuses)
    snap = sim.snapshot()
    battery, fix, pose, status = batteries[-1], fixes[-1], poses[-1], statuses[-1]
    assert battery.voltage == pytest.approx(13.2 + 3.6 * 0.61, abs=0.01)
    assert list(battery.cell_voltage) == []  # the simulator sends the pack, not its cells
    assert fix.status.status == NavSatStatus.STATUS_FIX
    assert (fix.latitude, fix.longitude) == (pytest.approx(snap['lat'], abs=1e-5),
                                             pytest.approx(snap['lon'], abs=1e-5))
    assert fix.altitude == pytest.approx(snap['amsl'], abs=1.0)  # no ellipsoid height: AMSL
    east, north = enu_offset(snap['lat'], snap['lon'], *sim.home[:2])
    assert pose.header.frame_id == 'map'
    assert (pose.pose.position.x, pose.pose.position.y, pose.pose.position.z) == (
        pytest.approx(east, abs=2.0), pytest.approx(north, abs=2.0),
        pytest.approx(snap['alt'], abs=1.0))
    assert pose.header.stamp.sec > 0 and status.header.stamp.sec > 0
    assert (status.source, status.autopilot, status.armed) == ('mavlink', 'ArduCopter',
                                                               snap['armed'])
    assert status.battery_pct == pytest.approx(61.0)

    def link_status():
        for array in reversed(diagnostics):
            for s in array.status:
                if s.name == 'tool_router: mavlink link /mav_plain/executor_node':
                    return s
        return None
    assert wait_for(lambda: link_status() is not None, timeout_s=10.0), \
        [s.name for a in diagnostics for s in a.status]
    link = link_status()
    values = {kv.key: kv.value for kv in link.values}
    assert link.level == DiagnosticStatus.OK, link.message
    assert link.message.startswith('ArduCopter linked, mode ')
    # a heartbeat was seen (OK already says within heartbeat_timeout_s: no wall-clock bound)
    assert values['heartbeat_age_s'] != '' and float(values['heartbeat_age_s']) >= 0.0
    assert values['signing'] == 'off' and values['vehicle'] == '1/1'
    assert float(values['loss_pct 1/1']) < 5.0 and int(values['received 1/1']) > 10
