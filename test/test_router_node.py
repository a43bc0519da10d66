"""The router node as a real process over DDS, called by a real rclpy client."""

import json
import threading

import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.serialization import serialize_message

from procs import NodeProcess, wait_until
from tool_router.msg import Request, SelectedCapabilities
from tool_router.srv import RouteRequest

pytestmark = pytest.mark.slow  # starts ROS or server processes


@pytest.fixture(scope='module')
def router_process():
    proc = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true')
    if not proc.wait_for('serving /route_request', 180):
        proc.stop()
        pytest.fail('router did not start:\n' + proc.output[-3000:])
    yield proc
    code = proc.stop()
    assert code == 0, proc.output[-2000:]


@pytest.fixture(scope='module')
def ros(router_process):
    rclpy.init()
    node = rclpy.create_node('test_router_client')
    received: list[SelectedCapabilities] = []
    diagnostics: list[DiagnosticArray] = []
    selected = node.create_subscription(SelectedCapabilities, '/tool_router/selected',
                                        received.append, 50)
    node.create_subscription(DiagnosticArray, '/diagnostics', diagnostics.append, 10)
    client = node.create_client(RouteRequest, '/route_request')
    request_pub = node.create_publisher(Request, '/tool_router/requests', 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    assert client.wait_for_service(timeout_sec=30)
    # events, not luck: a reply, a selection or a request sent before both ends have matched
    # is lost, so wait until the router answers (an empty request changes nothing) and the
    # topics have met their other end
    assert wait_until(lambda: _answered(client), 60), 'the router never answered a probe'
    assert wait_until(lambda: selected.get_publisher_count() > 0
                      and request_pub.get_subscription_count() > 0, 30)
    yield {
        'node': node,
        'client': client,
        'received': received,
        'diagnostics': diagnostics,
        'request_pub': request_pub,
    }
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()


def _answered(client) -> bool:
    from test_executor_nodes import RosPeer
    return RosPeer._probe(client, RouteRequest)


def call(ros, text, policy='', max_tools=0, execute=False):
    future = ros['client'].call_async(
        RouteRequest.Request(text=text, policy=policy, max_tools=max_tools, execute=execute)
    )
    assert wait_until(future.done, 30), 'no answer from /route_request'
    return future.result()


def test_direct_request(ros):
    resp = call(ros, 'land the drone')
    assert resp.success, resp.message
    assert resp.tools and [c.tool for c in resp.choices] == list(resp.tools)
    assert all(0 < c.score <= 1 and c.evidence for c in resp.choices)
    assert resp.request_id and resp.policy and resp.latency_ms > 0
    assert not resp.fallback_used
    assert json.loads(resp.explanation_json)['fragments']


def test_route_only_never_publishes_a_selection(ros):
    resp = call(ros, 'land the drone')
    assert resp.success and resp.tools and not resp.executed
    # an executed request afterwards is published on the same reliable topic by the same
    # writer, so once its selection has arrived, one for the first would have arrived before
    marker = call(ros, 'land the drone', execute=True)
    assert wait_until(lambda: any(m.request_id == marker.request_id for m in ros['received']),
                      30)
    assert not any(m.request_id == resp.request_id for m in ros['received'])


def test_execute_without_an_executor_is_not_reported_as_success(ros):
    resp = call(ros, 'monitor the battery and land when it drops below 25%', execute=True)
    assert not resp.success and not resp.executed  # no executor runs in this module
    assert 'no executor acknowledged' in resp.message and 'battery_status' in resp.tools
    assert wait_until(lambda: any(m.request_id == resp.request_id for m in ros['received']), 30)
    msg = next(m for m in ros['received'] if m.request_id == resp.request_id)
    assert sorted(c.tool for c in msg.choices) == sorted(resp.tools)
    assert msg.request_text == 'monitor the battery and land when it drops below 25%'
    gated = {c.tool: c.condition for c in msg.choices}
    assert gated['land'] == 'when it drops below 25%' and gated['battery_status'] == ''
    assert msg.policy == resp.policy


@pytest.mark.parametrize(
    'text, policy, pattern',
    [
        ('', '', 'empty'),
        ('   ', '', 'empty'),
        ('\x01\x02\x1b', '', 'empty'),
        ('\u200b\u200b', '', 'empty'),
        ('\ufeff', '', 'empty'),
        ('x' * 2001, '', 'longer than the maximum'),
        ('land', 'no_such_policy', 'unknown policy'),
    ],
)
def test_bad_requests_are_refused_and_the_node_keeps_serving(ros, text, policy, pattern):
    before = len(ros['received'])
    resp = call(ros, text, policy)
    assert not resp.success and pattern in resp.message
    assert list(resp.tools) == []
    assert call(ros, 'take a photo').success
    assert len(ros['received']) >= before


def test_max_tools_and_explicit_policy(ros):
    resp = call(
        ros, 'arm the motors, take off, fly to the tower, take a photo and land', 'cdbv1', 2
    )
    assert resp.success and resp.policy == 'cdbv1' and len(resp.tools) <= 2


def test_request_topic_drives_the_router(ros):
    ros['request_pub'].publish(Request(request_id='bag-001', text='start recording video',
                                       execute=True))
    assert wait_until(lambda: any(m.request_id == 'bag-001' for m in ros['received']), 30)


def test_a_request_naming_a_client_is_answered_on_its_own_topic(ros):
    """The second path for default-QoS clients (ros/answers.py): Request with a client_id,
    its RouteAnswer on tool_router/answers/<client_id>, read with rclpy's default QoS."""
    from tool_router.msg import RouteAnswer
    answers: list = []
    sub = ros['node'].create_subscription(RouteAnswer, '/tool_router/answers/tester1',
                                          answers.append, 10)
    try:
        ros['request_pub'].publish(Request(request_id='ans-1', text='land the drone',
                                           client_id='tester1'))
        ros['request_pub'].publish(Request(request_id='ans-2', text='', client_id='tester1'))
        ros['request_pub'].publish(Request(request_id='ans-3', client_id='tester1',
                                           text='arm the motors, take off, fly to the tower, '
                                                'take a photo and land', max_tools=2))
        assert wait_until(lambda: {a.request_id for a in answers} >= {'ans-1', 'ans-2',
                                                                      'ans-3'}, 60), \
            [a.request_id for a in answers]
        got = {a.request_id: a for a in answers}
        served = call(ros, 'land the drone')
        assert got['ans-1'].success and list(got['ans-1'].tools) == list(served.tools)
        assert got['ans-1'].client_id == 'tester1' and got['ans-1'].latency_ms > 0
        assert [c.tool for c in got['ans-1'].choices] == list(got['ans-1'].tools)
        assert not got['ans-2'].success and 'empty' in got['ans-2'].message
        assert got['ans-3'].success and 1 <= len(got['ans-3'].tools) <= 2
    finally:
        ros['node'].destroy_subscription(sub)


def test_a_client_id_that_is_no_name_is_refused_in_the_log(ros, router_process):
    ros['request_pub'].publish(Request(request_id='ans-bad', text='land',
                                       client_id='../executor/acks'))
    assert router_process.wait_for("ans-bad not answered: client_id '../executor/acks' is "
                                   'not a name', 30)


def test_invalid_utf8_on_the_request_topic_is_logged(ros, router_process):
    # A serialized Request whose text bytes are not UTF-8, published as raw CDR bytes.
    data = serialize_message(Request(request_id='bad-utf8', text='AAAA'))
    ros['request_pub'].publish(data.replace(b'AAAA', b'\xff\xfe\xc3('))
    assert router_process.wait_for('bad-utf8 rejected: request is not valid UTF-8', 30)


def test_diagnostics_report_health(ros, router_process):
    pid = str(router_process.proc.pid)
    assert call(ros, 'take a photo').success  # a latency to report, whatever ran before

    def ours():
        return [
            {kv.key: kv.value for kv in s.values} | {'_level': s.level}
            for d in ros['diagnostics']
            for s in d.status
            if s.name == 'tool_router: router /router_node'  # one status per node name
            and any(kv.key == 'pid' and kv.value == pid for kv in s.values)
        ]

    assert wait_until(lambda: any('latency_p50_ms' in v for v in ours()), 30)
    values = [v for v in ours() if 'latency_p50_ms' in v][-1]
    assert values['_level'] in (b'\x00', 0)
    assert values['catalog_size'] == '42' and values['device'] == 'cpu'
    assert int(values['ok']) >= 1 and float(values['latency_p50_ms']) > 0
    assert 'probes' in values  # a client's empty probe is counted apart, not as rejected


def test_bad_catalog_refuses_to_start(tmp_path):
    bad = tmp_path / 'catalog.yaml'
    bad.write_text(
        'version: 1\ntools:\n'
        '  - {name: land, kind: actuator, risk: extreme, summary: a, description: b}\n'
    )
    proc = NodeProcess(
        'tool_router.ros.router_node', '-p', f'catalog:={bad}', '-p', 'chroma_ephemeral:=true'
    )
    assert wait_until(lambda: proc.proc.poll() is not None, 60)
    proc.stop()
    assert proc.proc.returncode != 0
    assert 'risk' in proc.output and 'not serving' in proc.output


def set_params(ros, **values):
    from rcl_interfaces.msg import Parameter as ParamMsg
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    client = ros['node'].create_client(SetParameters, '/router_node/set_parameters')
    assert client.wait_for_service(timeout_sec=10)
    params = [
        Parameter(k.replace('__', '.'), value=v).to_parameter_msg() for k, v in values.items()
    ]
    assert all(isinstance(p, ParamMsg) for p in params)
    future = client.call_async(SetParameters.Request(parameters=params))
    assert wait_until(future.done, 30)
    ros['node'].destroy_client(client)
    return future.result().results


def test_routing_parameters_are_fixed_at_start(ros):
    """Nobody on the network changes what is routed (docs/SECURITY.md); the period may change."""
    from tool_router.common.param_doors import RESTART
    for name, value in (('policy', 'cdbv2'), ('cdbv3__gap', 5.0), ('model', 'another-model'),
                        ('max_tools', 3), ('lcr__threshold', 0.0)):
        (refused,) = set_params(ros, **{name: value})
        assert not refused.successful and 'read-only' in refused.reason, (name, refused.reason)
    (sim_time,) = set_params(ros, use_sim_time=True)  # declared by rclpy: our callback refuses
    assert not sim_time.successful and RESTART in sim_time.reason
    (too_fast,) = set_params(ros, diagnostics_period_s=0.001)
    assert not too_fast.successful and too_fast.reason.startswith('diagnostics_period_s:')
    (ok,) = set_params(ros, diagnostics_period_s=1.0)
    assert ok.successful
    (back,) = set_params(ros, diagnostics_period_s=2.0)
    assert back.successful
    assert call(ros, 'land the drone').policy == 'lcr'
