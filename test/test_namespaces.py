"""Two complete stacks (router, executor, simulator) in two namespaces on one DDS domain.

Every name the nodes use is relative, so ``-r __ns:=/uavN`` moves all of them: a
request executed on uav1 moves uav1's simulator only, and uav2 executes only what is sent
to uav2.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from procs import ROOT, NodeProcess, wait_until
from test_executor_nodes import UNSIGNED, RosPeer, read_records, start

pytestmark = pytest.mark.slow  # starts ROS processes (two routers with MiniLM)


def test_a_request_to_one_vehicle_never_moves_the_other(tmp_path):
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import String
    from tool_router.srv import RouteRequest
    from rcl_interfaces.srv import GetParameters
    from tool_router.common.params_files import prepare_params_file
    # the router's parameters as a user writes them (a plain router_node: key), given as
    # `serve --namespace` gives them; a slow executor on a busy machine is not a missing one:
    # 30 s for its ack
    router_file = tmp_path / 'router.yaml'
    router_file.write_text('router_node:\n  ros__parameters:\n    chroma_ephemeral: true\n'
                           '    executor_ack_timeout_s: 30.0\n')
    procs: list[NodeProcess] = []
    peer = None
    try:
        for ns in ('uav1', 'uav2'):
            remap = ('-r', f'__ns:=/{ns}')
            prepared = prepare_params_file(router_file, 'router_node', ns,
                                           ['router_node', 'executor_node', 'sim_vehicle'],
                                           tmp_path / 'prepared')
            procs.append(NodeProcess('tool_router.ros.router_node', *remap,
                                     '--params-file', prepared))
            procs.append(start('tool_router.ros.sim_vehicle', *remap,
                               ready='simulated vehicle ready'))
            procs.append(start('tool_router.ros.executor_node', *remap, *UNSIGNED,
                               '-p', f'trace_dir:={tmp_path / ns}', ready='executor ready'))
        for router, ns in ((procs[0], 'uav1'), (procs[3], 'uav2')):
            assert router.wait_for(f'serving /{ns}/route_request', 240), router.output[-2000:]
        peer = RosPeer()
        for ns in ('uav1', 'uav2'):  # the file applied under the namespace
            got = peer.call(GetParameters, f'/{ns}/router_node/get_parameters',
                            GetParameters.Request(names=['executor_ack_timeout_s',
                                                         'chroma_ephemeral']))
            assert [(v.double_value, v.bool_value) for v in got.values] == [(30.0, False),
                                                                            (0.0, True)]
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        states = {ns: peer.watch(String, f'/{ns}/sim/state', latched) for ns in ('uav1', 'uav2')}
        assert wait_until(lambda: all(states.values()), 30)
        # selections are volatile: route only once each executor is on the graph
        assert wait_until(lambda: all(peer.sees_executor(f'/{ns}') for ns in ('uav1', 'uav2')), 60)
        before = {ns: json.loads(box[-1].data)['commands'] for ns, box in states.items()}

        resp = peer.call(RouteRequest, '/uav1/route_request', RouteRequest.Request(
            text='take a photo', execute=True), timeout_s=60)
        assert resp.success and resp.executed and 'rgb_camera' in resp.tools, resp.message
        assert wait_until(lambda: any(r['request_id'] == resp.request_id
                                      for r in read_records(tmp_path / 'uav1')), 30)
        assert wait_until(lambda: json.loads(states['uav1'][-1].data)['commands']
                          > before['uav1'], 30)
        # route only on uav2: answered, nothing executed anywhere. Checked by events, not by
        # waiting for nothing: a marker executed on uav2 afterwards, then a clean stop of uav2's
        # executor, which traces everything it received
        dry = peer.call(RouteRequest, '/uav2/route_request',
                        RouteRequest.Request(text='land the drone'), timeout_s=60)
        assert dry.success and not dry.executed and dry.tools
        marker = peer.call(RouteRequest, '/uav2/route_request', RouteRequest.Request(
            text='take a photo', execute=True), timeout_s=60)
        assert marker.success and marker.executed, marker.message
        assert wait_until(lambda: any(r['request_id'] == marker.request_id
                                      for r in read_records(tmp_path / 'uav2')), 30)
        assert wait_until(lambda: json.loads(states['uav2'][-1].data)['last_command']
                          == 'rgb_camera', 30)
        assert json.loads(states['uav2'][-1].data)['commands'] == before['uav2'] + 1
        assert procs[5].stop() == 0  # uav2's executor
        assert {r['request_id'] for r in read_records(tmp_path / 'uav2')} == {marker.request_id}
        assert {r['request_id'] for r in read_records(tmp_path / 'uav1')} == {resp.request_id}
        assert json.loads(states['uav1'][-1].data)['last_command'] == 'rgb_camera'
    finally:
        if peer is not None:
            peer.close()
        codes = [p.stop() for p in reversed(procs)]
    assert all(code == 0 for code in codes), codes


def executor_in(ns: str, params_file: str, home, *extra: str) -> NodeProcess:
    """An executor in ``/ns`` with ``params_file`` (as `serve --namespace` gives it) and
    ROS_HOME ``home``."""
    proc = NodeProcess('tool_router.ros.executor_node', '-r', f'__ns:=/{ns}',
                       '--params-file', params_file, *extra, env={'ROS_HOME': str(home)})
    if not proc.wait_for('executor ready', 120):
        proc.stop()
        pytest.fail(f'executor in /{ns} did not start:\n{proc.output}')
    return proc


def test_two_vehicles_sharing_a_ros_home_keep_their_params_and_their_watches(tmp_path):
    """One ROS_HOME, two parameters files with the plain ``executor_node:`` key (uav1 execute,
    uav2 shadow, no MAVLink): each applies under its namespace, each vehicle's records say
    whose they are, and restarting uav2's executor (even on uav1's very trace directory) leaves
    uav1's armed watch armed."""
    from tool_router.common import signing
    from tool_router.common.params_files import prepare_params_file
    from tool_router.srv import ListWatches

    home = tmp_path / 'shared_ros_home'
    traces = home / 'tool_router' / 'traces'
    # the peer plays the router: the executors check its signature with the key it signs with
    common = (f'    require_signed_execute: false\n'
              f'    router_key_file: {signing.default_router_key_file()}\n')
    files = {}
    for ns, mode in (('uav1', 'execute'), ('uav2', 'shadow')):
        path = tmp_path / f'{ns}.yaml'
        path.write_text(f'executor_node:\n  ros__parameters:\n    mode: {mode}\n{common}')
        files[ns] = prepare_params_file(path, 'executor_node', ns, ['executor_node'],
                                        tmp_path / 'prepared')
    procs: list[NodeProcess] = []
    peer = None
    try:
        procs.append(executor_in('uav1', files['uav1'], home))
        procs.append(executor_in('uav2', files['uav2'], home))
        # each file applied: the mode of its own file, the trace directory of its namespace
        assert "mode execute" in procs[0].output and f"traces -> {traces / 'uav1'}/" \
            in procs[0].output, procs[0].output
        assert "mode shadow" in procs[1].output and f"traces -> {traces / 'uav2'}/" \
            in procs[1].output, procs[1].output
        peer = RosPeer()
        assert wait_until(lambda: all(peer.sees_executor(f'/{ns}') for ns in ('uav1', 'uav2')),
                          60)
        armed = peer.select('/uav1/tool_router/selected', ['gimbal_control'],
                            conditions=['after 10 minutes'])
        photo = peer.select('/uav2/tool_router/selected', ['rgb_camera'])

        def of(directory, rid):
            return [r for r in read_records(directory, events=True) if r['request_id'] == rid]

        def finals(directory, rid):
            return [r for r in of(directory, rid) if r.get('record') == 'request']
        assert wait_until(lambda: any(r.get('record') == 'watch' for r in
                                      of(traces / 'uav1', armed)), 30), procs[0].output
        assert wait_until(lambda: finals(traces / 'uav2', photo), 30)
        (shadowed,) = finals(traces / 'uav2', photo)
        assert shadowed['mode'] == 'shadow' and shadowed['tools'][0]['outcome'] == 'shadow'

        # restart uav2, this time writing to uav1's directory (an explicitly shared trace_dir);
        # its start-up recovery is written before it says ready
        to_uav2 = peer.publisher('/uav2/tool_router/selected')
        assert procs[1].stop() == 0
        assert wait_until(lambda: to_uav2.get_subscription_count() == 0, 30)
        procs[1] = executor_in('uav2', files['uav2'], home, '-p', f'trace_dir:={traces / "uav1"}')
        watch_events = [r['event'] for r in of(traces / 'uav1', armed) if r.get('record') ==
                        'watch']
        assert watch_events == ['armed'], watch_events  # not "cancelled: executor restarted"
        # selections are volatile: sent once the new subscription has matched
        assert wait_until(lambda: to_uav2.get_subscription_count() > 0, 30)
        again = peer.select('/uav2/tool_router/selected', ['rgb_camera'])
        assert wait_until(lambda: finals(traces / 'uav1', again), 30), procs[1].output
        listed = peer.call(ListWatches, '/uav1/executor/list_watches', ListWatches.Request())
        assert [(w.request_id, w.state) for w in listed.watches] == [(armed, 'armed')]
        # every record says whose it is, in both directories
        spaces = {d: {r['namespace'] for r in read_records(traces / d, events=True)}
                  for d in ('uav1', 'uav2')}
        assert spaces == {'uav1': {'/uav1', '/uav2'}, 'uav2': {'/uav2'}}
        assert {r['namespace'] for r in of(traces / 'uav1', armed)} == {'/uav1'}
        assert {r['namespace'] for r in of(traces / 'uav1', again)} == {'/uav2'}
        out = subprocess.run([sys.executable, '-m', 'tool_router.cli', 'trace', 'summary',
                              '--json'], capture_output=True, text=True, cwd=ROOT, timeout=60,
                             env={**os.environ, 'ROS_HOME': str(home)})
        per_ns = json.loads(out.stdout)['namespaces']
        assert sorted(per_ns) == ['/uav1', '/uav2'], out.stderr
        assert per_ns['/uav2']['modes'] == {'shadow': 2}
        assert per_ns['/uav1']['watches_left_armed'] == [{'request_id': armed,
                                                          'watch_ids': [listed.watches[0]
                                                                        .watch_id]}]
    finally:
        if peer is not None:
            peer.close()
        codes = [p.stop() for p in reversed(procs)]
    assert all(code == 0 for code in codes), codes
