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
    from tool_router.sim.autopilot import MavlinkSim
    from tool_router.common.paths import config_path

    base = tmp_path_factory.mktemp('mavlink_node')
    perms = base / 'permissions.yaml'
    perms.write_text(ALLOW_ALL)
    port = free_udp_port()
    sim = MavlinkSim(f'udpout:127.0.0.1:{port}', climb_mps=10.0, cruise_mps=15.0,
                     drain_pct_per_s=0.0).start()
    executor = start(
        'tool_router.ros.executor_node', '--params-file',
        str(config_path('executor_mavlink.yaml')),
        '-p', f'mavlink.connection:=udpin:127.0.0.1:{port}', '-p', f'trace_dir:={base}',
        '-p', f'permissions_file:={perms}', '-p', 'selection_topic:=/test_mav/selected',
        '-p', 'watch_period_s:=0.2', *UNSIGNED, ready='executor ready')
    # motion commands are refused until the vehicle's first HEARTBEAT: wait for the link
    if not executor.wait_for('vehicle heartbeat seen', 30.0):
        executor.stop()
        sim.stop()
        pytest.fail(f'the executor never saw the simulator\'s heartbeat:\n{executor.output}')
    peer = RosPeer()
    yield {'sim': sim, 'executor': executor, 'peer': peer, 'dir': base}
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
