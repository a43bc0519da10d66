"""What the operator sees, over DDS: `tool-router call --execute` waits for the executor's
outcome and prints one line per tool, `confirm` prints what the confirmed tool did, every hint
carries the namespace. A real router, executor and simulator, all in namespace uav7."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from procs import ROOT, NodeProcess
from test_executor_nodes import make_operators, start, wait_record

pytestmark = pytest.mark.slow  # starts ROS processes (a router with MiniLM)

NS = ('--namespace', 'uav7')


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    base = tmp_path_factory.mktemp('outcomes')
    operators = make_operators(base / 'operators.yaml', pilots=('op-pilot',), others=())
    remap = ('-r', '__ns:=/uav7')
    router = NodeProcess('tool_router.ros.router_node', *remap, '-p', 'chroma_ephemeral:=true',
                         '-p', 'executor_ack_timeout_s:=30.0')
    sim = start('tool_router.ros.sim_vehicle', *remap, ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', *remap, '-p', f'trace_dir:={base / "t"}',
                     '-p', 'confirm_timeout_s:=120.0', '-p', f'operators_file:={operators}',
                     ready='executor ready')
    try:
        assert router.wait_for('serving /uav7/route_request', 240), router.output[-3000:]
        yield {'operators': operators, 'traces': base / 't', 'executor': executor}
    finally:
        codes = [p.stop() for p in (executor, sim, router)]
    assert codes == [0, 0, 0]
    # the last test leaves a watch armed: the executor logs its cancellation while it stops,
    # with its context still up (rclpy's signal handler had shut it down first)
    assert 'cancelled: land when battery_status.battery_pct < 25 %' in executor.output
    assert 'Failed to publish log message to rosout' not in executor.output, executor.output


def signing(stack) -> tuple[str, ...]:
    return ('--operator', 'op-pilot', '--operators', str(stack['operators']))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'tool_router.cli', *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=400)


def call(stack, text: str, *extra: str) -> subprocess.CompletedProcess:
    return cli('call', '--execute', text, *NS, *signing(stack), *extra)


def outcome_line(out: str, tool: str) -> str:
    """The outcome line of ``tool`` (not its score line): tool, endpoint, outcome, detail."""
    return next(x for x in out.splitlines()
                if x.startswith(f'{tool} ') and x.split()[1].startswith(('trigger:', 'call:')))


def request_id(out: str) -> str:
    line = next(x for x in out.splitlines() if x.startswith('handed to the executor'))
    return line.split('request ')[1].split()[0].rstrip(';')


def test_a_refused_tool_is_printed_with_the_vehicles_answer_and_exits_1(stack):
    out = call(stack, 'take off')  # the simulator is disarmed: it refuses
    assert out.returncode == 1, out.stdout + out.stderr
    line = outcome_line(out.stdout, 'takeoff')
    # takeoff carries its height to the simulator (call: binding); disarmed, the vehicle refuses
    assert line.split()[1:3] == ['call:sim/tool_call', 'failed'], line
    assert 'vehicle_refused: refused: ' in line, line
    assert 'not done: takeoff' in out.stdout


def test_a_done_tool_exits_0_and_json_has_the_outcome_and_the_explanation(stack):
    out = call(stack, 'take a photo')
    assert out.returncode == 0, out.stdout + out.stderr
    line = outcome_line(out.stdout, 'rgb_camera')
    assert line.split()[1:3] == ['trigger:sim/rgb_camera', 'dispatched']
    assert 'photo captured' in line
    out = call(stack, 'take a photo', '--json')
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {'fallback_reason', 'explanation', 'outcome'} <= set(data)
    assert isinstance(data['explanation'], dict) and data['ok'] is True
    assert [t['outcome'] for t in data['outcome']['tools']] == ['dispatched']


def test_no_wait_returns_at_the_ack_and_trace_show_tells_it_later(stack):
    out = call(stack, 'take a photo', '--no-wait')
    assert out.returncode == 0, out.stderr
    rid = request_id(out.stdout)
    assert 'photo captured' not in out.stdout and f'tool-router trace show {rid}' in out.stdout
    wait_record(stack['traces'], rid, 60)
    shown = cli('trace', 'show', rid, str(stack['traces']))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f'request {rid}: "take a photo"')
    assert 'received (execute mode): rgb_camera' in shown.stdout
    assert 'rgb_camera dispatching to trigger:sim/rgb_camera' in shown.stdout
    assert 'finished: completed' in shown.stdout


def test_call_waits_through_the_confirmation_and_confirm_prints_the_outcome(stack):
    proc = subprocess.Popen([sys.executable, '-m', 'tool_router.cli', 'call', '--execute',
                             'arm the motors', *NS, *signing(stack)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line.rstrip('\n'))
            if line.strip().startswith('tool-router confirm '):
                break
        hint = seen[-1].strip()
        # the hint is a command to type as it is: the vehicle's namespace and the operator in it
        assert hint.endswith('arm_motors --approve --operator op-pilot --namespace uav7   '
                             '(or --deny)'), seen
        assert 'waits for an operator' in seen[-2]
        listed = cli('confirm', '--list', *NS)  # the list's hint carries the namespace too
        assert listed.returncode == 0, listed.stderr
        assert 'arm_motors --approve --namespace uav7 (or --deny)' in listed.stdout
        command = shlex.split(hint.split('   ')[0])[1:]
        confirmed = cli(*command, '--operators', str(stack['operators']))
        assert confirmed.returncode == 0, confirmed.stdout + confirmed.stderr
        line = outcome_line(confirmed.stdout, 'arm_motors')
        assert line.split()[1:3] == ['call:sim/tool_call', 'dispatched'], line
        assert 'motors armed (approved by op-pilot after' in line
        rest, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, '\n'.join(seen) + rest
    assert line in rest  # the waiting call prints the same line


def test_a_denied_tool_makes_call_exit_1_and_the_denial_exit_0(stack):
    proc = subprocess.Popen([sys.executable, '-m', 'tool_router.cli', 'call', '--execute',
                             'disarm the motors', *NS, *signing(stack)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line.rstrip('\n'))
            if line.strip().startswith('tool-router confirm '):
                break
        rid = seen[-1].split()[2]
        denied = cli('confirm', rid, 'disarm_motors', '--deny', *NS, *signing(stack))
        assert denied.returncode == 0, denied.stdout + denied.stderr
        line = outcome_line(denied.stdout, 'disarm_motors')
        assert line.split()[2:4] == ['denied', 'confirmation_denied:'], line
        assert 'operator denied by op-pilot' in line
        rest, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, '\n'.join(seen) + rest
    assert line in rest and 'not done: disarm_motors' in rest


def test_an_armed_watch_says_when_it_expires_with_the_commands_to_list_it(stack):
    out = call(stack, 'monitor the battery and land when it drops below 25%')
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    land = next(x for x in lines if x.startswith('land ') and ' armed ' in x)
    assert 'land runs once when battery_status.battery_pct < 25 %' in land, land
    watch = next(x for x in lines if x.startswith('watch w-'))
    assert ' expires at ' in watch and 'unless it fires first' in watch, watch
    assert watch.endswith(f'tool-router watch cancel {watch.split()[1]} --namespace uav7')
    assert 'tool-router watch list --namespace uav7' in watch
    listed = cli('watch', 'list', *NS, '--json')
    assert listed.returncode == 0, listed.stderr
    assert watch.split()[1] in [w['watch_id'] for w in json.loads(listed.stdout)]


def test_no_outcome_within_the_bound_exits_3_and_names_trace_show(stack):
    # --wait 0: the bound has passed before the first look (the record cannot be there yet:
    # the watch is only spun while it waits), whatever the machine's speed
    out = call(stack, 'take a photo', '--wait', '0')
    assert out.returncode == 3, out.stdout + out.stderr
    rid = request_id(out.stdout)
    assert f'no outcome of request {rid} within 0 s' in out.stderr
    assert f'tool-router trace show {rid} --namespace uav7' in out.stderr
