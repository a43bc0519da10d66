"""Who may execute, over real DDS: router, executor and simulated vehicle processes.

The test process is the network: it calls /route_request (and the CLI does) with and
without requester signatures. A signed request from an operator whose role covers the
selection is dispatched; unsigned, forged, replayed, stale and wrong-role ones dispatch
nothing, get the route answer back with the refusal, and are traced as security events;
route-only requests need no signature at all.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import pytest
from procs import ROOT, NodeProcess, wait_until
from test_executor_nodes import RosPeer, make_operators, read_records, start

pytestmark = pytest.mark.slow  # starts ROS processes and loads MiniLM


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'tool_router.cli', *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def _request(text: str, operators=None, name: str = '', age_s: float = 0.0, **override):
    """A RouteRequest to execute, signed by ``name``'s key (unsigned without a name)."""
    from tool_router.common import signing
    from tool_router.executor import auth
    from tool_router.srv import RouteRequest
    rid = f'x-{uuid.uuid4().hex[:12]}'
    req = RouteRequest.Request(text=text, execute=True, request_id=rid)
    if name:
        key, key_id = auth.signing_key(operators, name)
        s = signing.sign_request(key, key_id, rid, text, clock=lambda: time.time() - age_s)
        req.key_id, req.timestamp, req.nonce, req.signature = (s.key_id, s.timestamp, s.nonce,
                                                               s.signature)
    for field, value in override.items():
        setattr(req, field, value)
    return req


def test_only_signed_requests_from_a_permitted_role_execute(tmp_path):
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import String
    from tool_router.msg import Request
    from tool_router.ros.client import RouteClient
    from tool_router.srv import RouteRequest
    traces = tmp_path / 'traces'
    operators = make_operators(tmp_path / 'operators.yaml', pilots=('alice',),
                               others=(('wanda', 'payload_operator'),))
    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true')
    sim = start('tool_router.ros.sim_vehicle', ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', f'operators_file:={operators}',
                     '-p', f'trace_chain_key_file:={tmp_path / "chain.key"}',
                     ready='executor ready')
    peer = RosPeer()
    client = None
    try:
        assert router.wait_for('serving /route_request', 180), router.output
        assert 'signed execute: selections need a requester signature' in executor.output
        states = peer.watch(String, '/sim/state',
                            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        # one client that probes until the router can answer it (a fresh client's first
        # reply can be lost while discovery completes; see tool_router/ros/client.py)
        client = RouteClient(wait_s=60)

        def call(req):
            return client.call(req.text, timeout_s=60, execute=req.execute,
                               request_id=req.request_id, signature=req)

        # the router's ack reader and the executor's ack writer match some time after the
        # router says it serves; until then an ack is lost (the executor did dispatch). A
        # signed sensor read, repeated until acknowledged, waits for that event.
        assert wait_until(lambda: call(_request('what is the battery level', operators,
                                                'alice')).executed, 60, step_s=0.5)

        # route only: open, unsigned, nothing reaches the executor
        route_only = call(RouteRequest.Request(text='turn on the spotlight'))
        assert route_only.success and not route_only.executed, route_only.message
        assert 'spotlight' in route_only.tools

        # a signed request from a pilot is dispatched, and the trace says who asked
        ok_req = _request('turn on the spotlight', operators, 'alice')
        ok = call(ok_req)
        assert ok.success and ok.executed, ok.message
        assert ok.request_id == ok_req.request_id  # the router kept the signed id
        rec = _final(traces, ok.request_id)
        assert rec['requested_by'] == 'alice'
        assert [t['outcome'] for t in rec['tools']] == ['dispatched'] * len(rec['tools']), rec
        assert wait_until(lambda: states and json.loads(states[-1].data)['spotlight'], 30)

        forged = _request('take off to 20 metres', operators, 'alice')
        forged.signature = 'ab' * 32
        refused = {
            'unsigned': call(_request('take off to 20 metres')),
            'bad_signature': call(forged),
            'replayed_nonce': call(ok_req),  # the accepted request, sent again
            'stale': call(_request('take off to 20 metres', operators, 'alice', age_s=120.0)),
            'role_not_allowed': call(_request('take off to 20 metres', operators, 'wanda')),
            'unknown_key': call(_request('take off to 20 metres', key_id='k-mallory-123456',
                                         timestamp=time.time(), nonce='n' * 20,
                                         signature='cd' * 32)),
        }
        for reason, resp in refused.items():
            # the route answer still comes back; the executor refused it, said why
            assert not resp.success and not resp.executed, (reason, resp.message)
            assert resp.tools, (reason, 'the route answer is still returned')
            assert f'refused ({reason})' in resp.message, (reason, resp.message)

        # the request topic passes the signature through as the service does
        signed = _request('turn off the spotlight', operators, 'alice')
        topic_rid = signed.request_id
        msg = Request(request_id=topic_rid, text=signed.text, execute=True,
                      key_id=signed.key_id, timestamp=signed.timestamp, nonce=signed.nonce,
                      signature=signed.signature)
        pub = peer.node.create_publisher(Request, '/tool_router/requests', 10)
        assert wait_until(lambda: pub.get_subscription_count() > 0, 30)
        pub.publish(msg)
        assert _final(traces, topic_rid)['requested_by'] == 'alice'

        # the parameter service is on the network too: the requirement cannot be switched off
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters
        off = Parameter(name='require_signed_execute', value=ParameterValue(
            type=ParameterType.PARAMETER_BOOL, bool_value=False))
        answer = _call_until_answered(peer, SetParameters, '/executor_node/set_parameters',
                                      SetParameters.Request(parameters=[off]))
        assert not answer.results[0].successful and 'read-only' in answer.results[0].reason
        assert not call(_request('take off to 20 m')).executed

        # the CLI signs --execute with the operator's key file; route only needs no key
        out = cli('call', 'turn on the spotlight', '--execute', '--operator', 'wanda',
                  '--operators', str(operators))
        assert out.returncode == 0 and 'handed to the executor' in out.stdout, out.stderr
        cli_rid = out.stdout.rsplit('request ', 1)[1].split()[0]
        assert _final(traces, cli_rid)['requested_by'] == 'wanda'
        out = cli('call', 'take off to 20 metres', '--execute', '--unsigned')
        assert out.returncode == 1 and 'refused (unsigned)' in out.stderr, out.stderr
        out = cli('call', 'take off to 20 metres', '--operators', str(tmp_path / 'none.yaml'))
        assert out.returncode == 0 and 'route only' in out.stdout, out.stderr
    finally:
        if client is not None:
            client.close()
        peer.close()
        codes = [p.stop() for p in (executor, sim, router)]
    assert codes == [0, 0, 0]

    records = read_records(traces)
    events = [r for r in records if r.get('record') == 'security']
    assert all(e['event'] == 'execute_refused' for e in events)
    reasons = sorted(e['reason'] for e in events)
    # + the unsigned call after the parameter change, + the CLI's --unsigned
    assert reasons == sorted([*refused, 'unsigned', 'unsigned']), reasons
    by_reason = {e['reason']: e for e in events}
    assert by_reason['replayed_nonce']['request_id'] == ok_req.request_id
    wrong = by_reason['role_not_allowed']
    assert (wrong['key_owner'], wrong['claimed_operator']) == ('wanda', 'wanda')
    assert 'takeoff' in wrong['tools'] and 'takeoff (motion)' in wrong['detail']
    assert by_reason['unknown_key']['key_id'] == 'k-mallory-123456'
    assert by_reason['unknown_key']['key_owner'] == ''
    # nothing refused was dispatched: no request record, no write-ahead event for them
    refused_ids = {e['request_id'] for e in events}
    dispatched = {r['request_id'] for r in read_records(traces, events=True)
                  if r.get('record') in ('request', 'event')}
    assert refused_ids.isdisjoint(dispatched - {ok_req.request_id})
    assert route_only.request_id not in dispatched
    assert 'SECURITY: refused to execute request' in executor.output
    keys = [p.read_text().strip() for p in (tmp_path / 'keys').glob('*.key')]
    for key in keys:
        assert key not in executor.output and key not in router.output
        assert all(key not in p.read_text() for p in traces.glob('*'))


def _call_until_answered(peer, srv_type, name: str, request, timeout_s: float = 30.0):
    """Call an idempotent service until it answers (a fresh client's first reply may be lost)."""
    import threading
    client = peer.node.create_client(srv_type, name)
    try:
        assert client.wait_for_service(timeout_sec=timeout_s), f'{name} not available'
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            done = threading.Event()
            future = client.call_async(request)
            future.add_done_callback(lambda _: done.set())
            if done.wait(2.0):
                return future.result()
            client.remove_pending_request(future)
        raise AssertionError(f'no answer from {name} within {timeout_s:g} s')
    finally:
        peer.node.destroy_client(client)


def _final(directory, rid, timeout_s=30.0) -> dict:
    found: list[dict] = []

    def look() -> bool:
        found[:] = [r for r in read_records(directory)
                    if r['request_id'] == rid and r.get('record') in (None, 'request')]
        return bool(found)
    assert wait_until(look, timeout_s), f'no request record for {rid} in {directory}'
    return found[0]


def test_unsigned_execute_is_possible_only_when_switched_off_and_then_loud(tmp_path):
    traces = tmp_path / 'traces'
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', 'require_signed_execute:=false', '-p', 'selection_topic:=/uns/selected',
                     '-p', 'ack_topic:=/uns/acks', '-p', 'trace_topic:=/uns/traces',
                     '-p', 'bindings.spotlight:=dry_run',
                     '-p', f'operators_file:={tmp_path / "none.yaml"}',
                     ready='executor ready')
    peer = RosPeer()
    try:
        assert executor.output.count('UNSIGNED EXECUTE') >= 3
        rid = peer.select('/uns/selected', ['spotlight'], 'turn on the spotlight')
        assert _final(traces, rid)['requested_by'] == ''
        # a signature, when present, is still checked
        from tool_router.ros.convert import plain_selection
        bad = plain_selection('x-forged', 'turn on the spotlight', ['spotlight'])
        bad.key_id, bad.timestamp, bad.nonce = 'k-x-123', time.time(), 'n' * 20
        bad.signature = 'ab' * 32
        bad.router_signature = _router_signature(bad)  # past the router check: the requester's
        peer.send('/uns/selected', bad)  # again until acknowledged (a best-effort reader)
        assert wait_until(lambda: any(r.get('record') == 'security'
                                      for r in read_records(traces)), 30), executor.output
    finally:
        peer.close()
        code = executor.stop()
    assert code == 0
    events = [r for r in read_records(traces) if r.get('record') == 'security']
    # (a copy sent again before the refusal's ack arrived is refused again)
    assert events and {(e['request_id'], e['reason']) for e in events} == {
        ('x-forged', 'unknown_key')}
    assert not [r for r in read_records(traces) if r['request_id'] == 'x-forged'
                and r.get('record') != 'security']


def _router_signature(msg) -> str:
    """The router's signature of ``msg`` (the key the executors here read by default)."""
    from tool_router.common import signing
    return signing.selection_signature(msg)


def test_a_copied_signature_with_other_tools_is_refused_and_the_routers_selection_runs(tmp_path):
    """The race of docs/SECURITY.md: someone copies a signed request's signature onto a selection
    of their own tools and publishes it before the router. Without the router's signature over
    the tools it is refused, and it does not use up the nonce: the router's selection runs."""
    from tool_router.common import signing
    from tool_router.executor import auth
    from tool_router.ros.convert import plain_selection
    traces = tmp_path / 'traces'
    operators = make_operators(tmp_path / 'operators.yaml', pilots=('alice',), others=())
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', 'selection_topic:=/race/selected', '-p', 'ack_topic:=/race/acks',
                     '-p', 'trace_topic:=/race/traces', '-p', 'bindings.spotlight:=dry_run',
                     '-p', 'bindings.speaker_broadcast:=dry_run',
                     '-p', f'operators_file:={operators}',
                     '-p', f'trace_chain_key_file:={tmp_path / "chain.key"}',
                     ready='executor ready')
    peer = RosPeer()
    rid, text = f'race-{uuid.uuid4().hex[:8]}', 'turn on the spotlight'
    key, key_id = auth.signing_key(operators, 'alice')
    signed = signing.sign_request(key, key_id, rid, text)

    def selection(tools, router_signed):
        msg = plain_selection(rid, text, tools, policy='lcr', score=0.9)
        msg.key_id, msg.timestamp = signed.key_id, signed.timestamp
        msg.nonce, msg.signature = signed.nonce, signed.signature
        msg.router_signature = _router_signature(msg) if router_signed else 'cd' * 32
        return msg

    try:
        assert "selections need the router's signature" in executor.output
        forged = selection(['speaker_broadcast'], router_signed=False)
        # each sent again until the executor answers that very selection, as the router does
        assert peer.send('/race/selected', forged), executor.output
        # a router signature over other tools does not carry over to these
        moved = selection(['speaker_broadcast'], router_signed=False)
        moved.router_signature = _router_signature(selection(['spotlight'], True))
        assert peer.send('/race/selected', moved), executor.output
        assert peer.answers[(rid, forged.router_signature)] is False
        assert peer.answers[(rid, moved.router_signature)] is False
        genuine = selection(['spotlight'], router_signed=True)
        assert peer.send('/race/selected', genuine), executor.output
        assert peer.answers[(rid, genuine.router_signature)] is True
        final = _final(traces, rid)
    finally:
        peer.close()
        code = executor.stop()
    assert code == 0
    events = [r for r in read_records(traces) if r.get('record') == 'security']
    # both forgeries refused (a copy sent again before its ack is refused again: 2 or more)
    assert len(events) >= 2 and {(e['request_id'], e['reason'], tuple(e['tools']))
                                 for e in events} == {
        (rid, 'bad_router_signature', ('speaker_broadcast',))}
    assert final['requested_by'] == 'alice'
    assert [t['tool'] for t in final['tools']] == ['spotlight']


def test_a_captured_selection_replayed_after_a_restart_is_refused(tmp_path):
    """The nonce store outlives the executor: one signed 'take a photo' gives one photo, also
    when a capture of its selection is published again after the executor restarted (inside
    the signature's freshness window)."""
    from tool_router.common import signing
    from tool_router.executor import auth
    from tool_router.ros.convert import plain_selection
    traces = tmp_path / 'traces'
    operators = make_operators(tmp_path / 'operators.yaml', pilots=('alice',), others=())
    args = ('-p', f'trace_dir:={traces}', '-p', 'selection_topic:=/replay/selected',
            '-p', 'ack_topic:=/replay/acks', '-p', 'trace_topic:=/replay/traces',
            '-p', 'bindings.rgb_camera:=dry_run', '-p', f'operators_file:={operators}',
            '-p', f'trace_chain_key_file:={tmp_path / "chain.key"}')
    rid, text = f'replay-{uuid.uuid4().hex[:8]}', 'take a photo'
    key, key_id = auth.signing_key(operators, 'alice')
    signed = signing.sign_request(key, key_id, rid, text)
    captured = plain_selection(rid, text, ['rgb_camera'], policy='lcr', score=0.9)
    captured.key_id, captured.timestamp = signed.key_id, signed.timestamp
    captured.nonce, captured.signature = signed.nonce, signed.signature
    captured.router_signature = _router_signature(captured)
    peer = RosPeer()
    try:
        for run in range(2):
            executor = start('tool_router.ros.executor_node', *args, ready='executor ready')
            try:
                pub = peer.publisher('/replay/selected')
                # this writer must have matched the new executor's reader (a volatile topic)
                assert wait_until(lambda: pub.get_subscription_count() == 1, 60)
                peer.send('/replay/selected', captured)
                if run == 0:
                    assert _final(traces, rid)['tools'][0]['outcome'] == 'dry_run'
                else:
                    assert wait_until(lambda: any(
                        r.get('record') == 'security' for r in read_records(traces)), 30), \
                        executor.output
            finally:
                assert executor.stop() == 0
    finally:
        peer.close()
    records = read_records(traces)
    finals = [r for r in records if r.get('record') in (None, 'request')]
    assert [r['request_id'] for r in finals] == [rid]  # one photo
    refused = [r for r in records if r.get('record') == 'security']
    # a copy sent again before the refusal's ack arrived is refused again: one or more records
    assert refused and {(r['request_id'], r['reason']) for r in refused} == {
        (rid, 'replayed_nonce')}
