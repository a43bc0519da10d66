"""A signed `tool-router config set` against the real router process (issue 26 item 1).

The router runs as a process in the /cfg namespace with an operators file holding an admin
(root) and a pilot (alice). Changes come from fresh ``tool-router config`` processes, one of them
an attacker's with an empty ROS_HOME, and from this process over DDS (a captured change sent
again). What must hold:

* only the admin's signed change is applied, and routing follows it from the next request on;
  a keyless process, a forged signature, the pilot, a replay, a value no JSON holds and a
  change that needs a restart are refused, each with its reason, and change nothing;
* every decision is a journal line (``decided`` before ``applied``), refusals included;
* a lifecycle cleanup and configure (open to anyone on the network) keeps the admin's change;
* ``config show`` and ``/diagnostics`` (``config_changes``, ``config_last_change``) say what
  was changed, and by whom.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from procs import ROOT, NodeProcess, wait_until

pytestmark = pytest.mark.slow  # starts the router process and loads MiniLM

NS = '/cfg'
SERVICE = f'{NS}/router_node/set_config'


def cli(*args: str, home) -> subprocess.CompletedProcess:
    env = {**os.environ, 'ROS_HOME': str(home)}
    # a long --timeout: a slow answer is waited for, not answered by a second signed change
    return subprocess.run([sys.executable, '-m', 'tool_router.cli', 'config', *args,
                           '--namespace', NS[1:], '--timeout', '90'],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)


def route(text: str):
    from tool_router.ros.executor_client import call_service
    from tool_router.srv import RouteRequest

    resp = call_service(RouteRequest, f'{NS}/route_request', RouteRequest.Request(text=text), 60)
    assert resp.success, resp.message
    return resp


def transition(node: str, transition_id: int) -> bool:
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState

    from tool_router.ros.executor_client import call_service

    request = ChangeState.Request(transition=Transition(id=transition_id))
    return bool(call_service(ChangeState, f'{node}/change_state', request, 120).success)


def test_only_an_admins_signed_change_reconfigures_the_running_router(tmp_path):
    from tool_router.common import signing
    from tool_router.executor import auth
    from tool_router.ros.executor_client import call_service
    from tool_router.routing.signed_config import ConfigChange
    from tool_router.srv import SetConfig

    vehicle = tmp_path / 'vehicle'
    operators = vehicle / 'operators.yaml'
    auth.add_operator(operators, 'root', 'admin')
    auth.add_operator(operators, 'alice', 'pilot')
    journal_dir = tmp_path / 'journal'
    attacker = tmp_path / 'attacker'
    attacker.mkdir()
    stolen = attacker / 'stolen.key'
    signing.write_key(stolen)
    router = NodeProcess('tool_router.ros.router_node', '-r', f'__ns:={NS}',
                         '-p', 'chroma_ephemeral:=true', '-p', f'operators_file:={operators}',
                         '-p', f'config_dir:={journal_dir}', env={'ROS_HOME': str(vehicle)})
    try:
        assert router.wait_for('serving', 300), router.output[-3000:]
        before = route('take a photo of the tower')
        assert before.policy == 'lcr'
        root_key_id = auth.signing_key(operators, 'root')[1]
        own = ('--operators', str(operators))

        refused = {
            # the attacker's home has no operators file and no key: the CLI says so, sends nothing
            'keyless': cli('set', 'policy=cdbv1', '--operator', 'root', home=attacker),
            'forged': cli('set', 'policy=cdbv1', '--key', str(stolen), '--key-id', root_key_id,
                          home=attacker),
            'unknown_key': cli('set', 'policy=cdbv1', '--key', str(stolen), home=attacker),
            'pilot': cli('set', 'policy=cdbv1', '--operator', 'alice', *own, home=vehicle),
            'restart_only': cli('set', 'serving.threads=4', '--operator', 'root', *own,
                                home=vehicle),
            'invalid': cli('set', 'max_tools=0', '--operator', 'root', *own, home=vehicle),
        }
        codes = {k: p.returncode for k, p in refused.items()}
        assert codes == {'keyless': 2, 'forged': 1, 'unknown_key': 1, 'pilot': 1,
                         'restart_only': 1, 'invalid': 1}, {k: p.stderr
                                                            for k, p in refused.items()}
        assert 'no operators file' in refused['keyless'].stderr
        assert 'refused (bad_signature' in refused['forged'].stderr
        assert 'refused (unknown_key' in refused['unknown_key'].stderr
        assert 'refused (role_not_allowed' in refused['pilot'].stderr
        assert 'needs admin' in refused['pilot'].stderr
        assert 'restart the node' in refused['restart_only'].stderr
        assert 'max_tools' in refused['invalid'].stderr
        assert route('take a photo of the tower').policy == 'lcr'  # nothing changed

        ok = cli('set', 'policy=cdbv3', 'max_tools=1', '--operator', 'root', *own, '--json',
                 home=vehicle)
        assert ok.returncode == 0, ok.stderr
        answer = json.loads(ok.stdout)
        assert answer['success'] and 'applied by root' in answer['message']
        assert answer['changed'] == ['max_tools: 8 -> 1', 'policy: "lcr" -> "cdbv3"']
        after = route('take a photo of the tower and switch on the spotlight')
        assert after.policy == 'cdbv3' and len(after.tools) <= 1

        # a captured signed change, sent again over DDS: a replay
        key, key_id = auth.signing_key(operators, 'root')
        from rclpy.parameter import Parameter
        signed = signing.sign_config(key, key_id, f'{NS}/router_node', {'max_tools': 2})
        captured = SetConfig.Request(
            parameters=[Parameter('max_tools', value=2).to_parameter_msg()],
            operator_name='root', key_id=key_id, timestamp=signed.timestamp,
            nonce=signed.nonce, signature=signed.signature)
        first = call_service(SetConfig, SERVICE, captured, 60)
        second = call_service(SetConfig, SERVICE, captured, 60)
        assert first.success and first.changed == ['max_tools: 1 -> 2'], first.message
        assert not second.success and 'replayed_nonce' in second.message
        # a value no JSON can hold (raw bytes) is refused, and the router keeps serving
        from rcl_interfaces.msg import Parameter as ParameterMsg
        from rcl_interfaces.msg import ParameterType, ParameterValue
        junk = SetConfig.Request(
            parameters=[ParameterMsg(name='policy', value=ParameterValue(
                type=ParameterType.PARAMETER_BYTE_ARRAY, byte_array_value=[b'a']))],
            key_id=key_id, timestamp=signed.timestamp, nonce='z' * 16, signature='0' * 64)
        odd = call_service(SetConfig, SERVICE, junk, 60)
        assert not odd.success and 'malformed' in odd.message, odd.message

        # anyone may cycle the lifecycle: the admin's change outlives a cleanup and configure
        for step in (4, 2, 1, 3):  # deactivate, cleanup, configure, activate
            assert transition(f'{NS}/router_node', step), router.output[-2000:]
        again = route('take a photo of the tower and switch on the spotlight')
        assert again.policy == 'cdbv3' and len(again.tools) <= 2

        from diagnostic_msgs.msg import DiagnosticArray

        from tool_router.ros.session import RosSession
        session = RosSession('cfg_diag')
        seen: list[dict[str, str]] = []
        session.node.create_subscription(
            DiagnosticArray, '/diagnostics',
            lambda m: seen.extend({kv.key: kv.value for kv in st.values} for st in m.status
                                  if st.name.endswith(f'{NS}/router_node')), 10)
        def shown_on_diagnostics() -> bool:
            session.executor.spin_once(timeout_sec=0.2)
            return any(v.get('config_changes') == '3' for v in seen)

        try:
            assert wait_until(shown_on_diagnostics, 60), seen[-1:]
        finally:
            session.close()
        last = next(v for v in seen if v.get('config_changes') == '3')
        assert last['config_last_change'] == 'max_tools: 1 -> 2 (by root)'

        shown = cli('show', '--json', home=attacker)  # reading is open, like `ros2 param get`
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)['changed'] == [
            'max_tools: 8 -> 1 (by root)', 'policy: "lcr" -> "cdbv3" (by root)',
            'max_tools: 1 -> 2 (by root)']
    finally:
        code = router.stop()
    assert code == 0, router.output[-2000:]

    lines = [ConfigChange.model_validate(json.loads(x)) for x in
             (journal_dir / 'cfg.router_node.jsonl').read_text().splitlines()]
    events = [(r.event, r.operator) for r in lines]
    assert events.count(('decided', 'root')) == 2 and events.count(('applied', 'root')) == 2
    assert events.index(('decided', 'root')) < events.index(('applied', 'root'))
    reasons = [r.reason.split(':', 1)[0] for r in lines if r.event == 'refused']
    assert sorted(reasons) == ['bad_signature', 'invalid', 'invalid', 'malformed',
                               'replayed_nonce', 'role_not_allowed', 'unknown_key'], reasons
    assert all(r.node == f'{NS}/router_node' for r in lines)
    assert (journal_dir / 'cfg.router_node.nonces.jsonl').exists()
