"""use_sim_time: the executor's and the simulator's messages carry the /clock time.

Real node processes; the test's peer publishes rosgraph_msgs/Clock at a time far from the
wall clock (from 1,234 s on), as a simulator or a bag replay would. Trace records keep wall time
(the hash chain and the operators' signatures are wall-clock); messages follow the node's
clock (docs/EXECUTOR.md, "Time").
"""
from __future__ import annotations

import threading

import pytest
from test_executor_nodes import UNSIGNED, RosPeer, start, wait_record
from procs import wait_until

pytestmark = pytest.mark.slow  # starts ROS processes
SIM_SEC = 1234


def simulated(sec: int) -> bool:
    """A stamp of the test's /clock, not of the wall clock (the test runs well under 1000 s)."""
    return SIM_SEC <= sec < SIM_SEC + 1000


@pytest.fixture()
def clocked(tmp_path):
    from builtin_interfaces.msg import Time
    from rosgraph_msgs.msg import Clock
    peer = RosPeer()
    pub = peer.node.create_publisher(Clock, '/clock', 10)
    stop = threading.Event()

    def tick() -> None:  # simulated time runs from SIM_SEC at the wall clock's pace
        at = float(SIM_SEC)
        while not stop.wait(0.05):
            at += 0.05
            pub.publish(Clock(clock=Time(sec=int(at), nanosec=int(at % 1 * 1e9))))
    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    ns = ('-r', '__ns:=/simtime', '-p', 'use_sim_time:=true')
    sim = start('tool_router.ros.sim_vehicle', *ns, ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', *ns, '-p', f'trace_dir:={tmp_path}',
                     *UNSIGNED, ready='executor ready')
    yield peer, tmp_path
    stop.set()
    thread.join()
    peer.close()
    assert {'executor': executor.stop(), 'sim': sim.stop()} == {'executor': 0, 'sim': 0}


def test_messages_are_stamped_with_the_clock_topic(clocked):
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import BatteryState
    from tool_router.msg import SelectionAck, VehicleStatus
    from tool_router.ros.common import ack_qos, latched
    peer, traces = clocked
    diagnostics = peer.watch(DiagnosticArray, '/diagnostics')
    acks = peer.watch(SelectionAck, '/simtime/executor/acks', ack_qos())
    batteries = peer.watch(BatteryState, '/simtime/sim/battery')
    statuses = peer.watch(VehicleStatus, '/simtime/sim/status', latched(1))

    def executor_stamps() -> list[int]:
        return [a.header.stamp.sec for a in diagnostics for s in a.status
                if s.name == 'tool_router: executor /simtime/executor_node']
    assert wait_until(lambda: executor_stamps(), 30), 'no executor diagnostics'
    assert wait_until(lambda: simulated(executor_stamps()[-1]), 15), executor_stamps()[-3:]
    assert wait_until(lambda: batteries and simulated(batteries[-1].header.stamp.sec), 15), \
        [b.header.stamp.sec for b in batteries[-3:]]
    assert wait_until(lambda: statuses and simulated(statuses[-1].header.stamp.sec), 15)
    assert statuses[-1].source == 'simulator' and statuses[-1].phase == 'disarmed'
    rid = peer.select('/simtime/tool_router/selected', ['battery_status'], 'check the battery')
    record = wait_record(traces, rid)
    assert record['tools'][0]['outcome'] == 'dispatched', record['tools']
    assert wait_until(lambda: any(a.request_id == rid for a in acks), 15)
    ack = next(a for a in acks if a.request_id == rid)
    assert simulated(ack.stamp.sec) and ack.accepted
    assert record['stamps']['received'] > 1_000_000_000  # the record keeps wall time
