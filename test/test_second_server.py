"""A second server on a vehicle's service name is detected (issue 26 #4; docs/SECURITY.md).

Real executor and simulator processes in their own namespace, and a keyless process
(test/second_server.py, empty ROS_HOME) that offers the simulator's battery service a second
time, answering 5%. The executor counts the servers of a service before it calls it: with two
it calls neither, a battery read fails ``endpoint_ambiguous`` with the name, and a "land below
25%" watch never fires on the forged 5% (its last error says why). Once the second server is
gone, the same read goes through to the simulator again.
"""
from __future__ import annotations

import signal
import uuid

import pytest
from procs import ROOT, NodeProcess, wait_until
from test_executor_durability import executor
from test_executor_nodes import RosPeer, start, wait_record

pytestmark = pytest.mark.slow  # starts ROS processes


def test_a_second_server_on_the_battery_name_is_refused_and_no_watch_fires_on_it(tmp_path):
    ns = f'ss{uuid.uuid4().hex[:6]}'
    trace_dir = tmp_path / 'traces'
    sim = start('tool_router.ros.sim_vehicle', '-r', f'__ns:=/{ns}',
                ready='simulated vehicle ready')
    proc = executor(trace_dir, ns)
    from tool_router.srv import ListWatches
    home = tmp_path / 'mallory'
    home.mkdir()
    fake = None
    peer = RosPeer()
    try:
        peer.connect(ListWatches, f'/{ns}/executor/list_watches')
        topic = f'/{ns}/tool_router/selected'
        # the baseline: a read reaches the one simulator. Read until one does: the executor's
        # first call on a fresh client can lose its reply before the simulator's reply writer
        # has matched it (rmw_fastrtps; docs/TESTING.md), as one fresh-clone CI run saw
        honest: list[dict] = []

        def read_honestly() -> bool:
            honest[:] = [wait_record(trace_dir, peer.select(topic, ['battery_status'],
                                                            'battery?'), 30)]
            return honest[0]['tools'][0]['outcome'] == 'dispatched'
        assert wait_until(read_honestly, 90), honest[0]['tools']
        fake = NodeProcess('second_server', env={
            'PYTHONPATH': f'{ROOT / "test"}:{ROOT}', 'ROS_HOME': str(home),
            'SECOND_SERVER_NAME': f'/{ns}/sim/battery_status'})
        assert fake.wait_for('second server up', 60), fake.output
        assert wait_until(lambda: peer.node.count_services(f'/{ns}/sim/battery_status') == 2,
                          60)

        def read_once() -> dict:
            return wait_record(trace_dir, peer.select(topic, ['battery_status'], 'battery?'), 30)
        # the executor's graph sees the second server some time after ours does
        assert wait_until(lambda: read_once()['tools'][0]['failure_mode'] ==
                          'endpoint_ambiguous', 60)
        refused = read_once()['tools'][0]
        assert '2 servers offer' in refused['message'], refused
        assert f'/{ns}/sim/battery_status' in refused['message']
        rid = peer.select(topic, ['land', 'battery_status'],
                          conditions=['when the battery is below 25%', ''])

        def watch():
            answer = peer.call(ListWatches, f'/{ns}/executor/list_watches',
                               ListWatches.Request(include_ended=True))
            return next((w for w in answer.watches if w.request_id == rid), None)
        assert wait_until(lambda: watch() is not None and 'servers offer' in watch().last_error,
                          30), watch()
        assert watch().state == 'armed'  # the forged 5% was never compared
        fake.stop(signal.SIGINT)
        fake = None
        assert wait_until(lambda: read_once()['tools'][0]['outcome'] == 'dispatched', 60)
        assert wait_until(lambda: watch().samples > 0 and watch().last_error == '', 30), watch()
        assert watch().state == 'armed'  # the real battery (100%) is not below 25%
    finally:
        if fake is not None:
            fake.stop(signal.SIGINT)
        peer.close()
        proc.stop()
        sim.stop()
