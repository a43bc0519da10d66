"""The executor as a lifecycle node, driven by a manager as nav2's lifecycle manager would.

Real processes: the executor with ``autostart:=false`` and the simulated vehicle; the test's
peer calls ``/lc/executor_node/change_state`` with lifecycle_msgs/srv/ChangeState (the
default-QoS client a manager uses) and watches what is on the graph and on disk.
"""
from __future__ import annotations

import pytest
from test_executor_nodes import UNSIGNED, RosPeer, read_records, start, wait_record
from procs import wait_until

pytestmark = pytest.mark.slow  # starts ROS processes
NS = '/lc'


@pytest.fixture()
def managed(tmp_path):
    args = ('-r', f'__ns:={NS}')
    sim = start('tool_router.ros.sim_vehicle', *args, ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', *args, '-p', 'autostart:=false',
                     '-p', f'trace_dir:={tmp_path}', '-p', 'watch_period_s:=0.2', *UNSIGNED,
                     ready='waiting for lifecycle transitions')
    peer = RosPeer()
    yield peer, executor, tmp_path
    peer.close()
    assert {'executor': executor.stop(), 'sim': sim.stop()} == {'executor': 0, 'sim': 0}


def transition(peer, label: str) -> bool:
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    ids = {'configure': Transition.TRANSITION_CONFIGURE,
           'activate': Transition.TRANSITION_ACTIVATE,
           'deactivate': Transition.TRANSITION_DEACTIVATE,
           'cleanup': Transition.TRANSITION_CLEANUP}
    request = ChangeState.Request(transition=Transition(id=ids[label]))
    return bool(peer.call(ChangeState, f'{NS}/executor_node/change_state', request).success)


def state(peer) -> str:
    from lifecycle_msgs.srv import GetState
    return str(peer.call(GetState, f'{NS}/executor_node/get_state',
                         GetState.Request()).current_state.label)


def test_configure_activate_deactivate_activate_cleanup(managed):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    peer, executor, traces = managed
    topic = f'{NS}/tool_router/selected'
    assert state(peer) == 'unconfigured'
    assert peer.node.count_subscribers(topic) == 0  # nothing taken before activation
    diagnostics = peer.watch(DiagnosticArray, '/diagnostics', wait_s=0.0)

    def executor_status():
        found = [s for a in diagnostics for s in a.status
                 if s.name == f'tool_router: executor {NS}/executor_node']
        return found[-1] if found else None
    assert transition(peer, 'configure') and state(peer) == 'inactive'
    assert executor.wait_for('executor configured', 30.0)
    assert wait_until(lambda: executor_status() is not None, 30), 'no executor diagnostics'
    inactive = executor_status()
    assert inactive.level == DiagnosticStatus.WARN and 'not active' in inactive.message
    assert peer.node.count_subscribers(topic) == 0

    assert transition(peer, 'activate') and state(peer) == 'active'
    assert wait_until(lambda: peer.node.count_subscribers(topic) == 1, 30)
    rid = peer.select(topic, ['battery_status'], 'check the battery')
    assert wait_record(traces, rid)['tools'][0]['outcome'] == 'dispatched'
    # a watch armed while active is cancelled, with the reason, when deactivated
    watched = peer.select(topic, ['land'], 'land when the battery drops below 5%',
                          conditions=['when the battery drops below 5%'])
    assert wait_record(traces, watched)['tools'][0]['outcome'] == 'armed'

    assert transition(peer, 'deactivate') and state(peer) == 'inactive'
    assert wait_until(lambda: peer.node.count_subscribers(topic) == 0, 30)
    assert wait_until(lambda: any(
        r.get('record') == 'watch' and r['request_id'] == watched and r['event'] == 'cancelled'
        and 'deactivated' in r['reason'] for r in read_records(traces)), 30)

    assert transition(peer, 'activate') and state(peer) == 'active'  # and once more
    assert wait_until(lambda: peer.node.count_subscribers(topic) == 1, 30)
    again = peer.select(topic, ['battery_status'], 'check the battery again')
    assert wait_record(traces, again)['tools'][0]['outcome'] == 'dispatched'
    assert transition(peer, 'deactivate') and transition(peer, 'cleanup')
    assert state(peer) == 'unconfigured'
    assert executor.output.count('executor ready') == 2


def test_autostart_false_with_a_bad_file_fails_at_configure_not_at_start(tmp_path):
    bad = tmp_path / 'missing-permissions.yaml'
    executor = start('tool_router.ros.executor_node', '-r', '__ns:=/lc_bad',
                     '-p', 'autostart:=false', '-p', f'permissions_file:={bad}',
                     '-p', f'trace_dir:={tmp_path}', *UNSIGNED,
                     ready='waiting for lifecycle transitions')
    peer = RosPeer()
    try:
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState
        answer = peer.call(ChangeState, '/lc_bad/executor_node/change_state',
                           ChangeState.Request(transition=Transition(
                               id=Transition.TRANSITION_CONFIGURE)))
        assert answer.success is False
        assert executor.wait_for('cannot configure:', 15.0), executor.output
        assert 'missing-permissions.yaml' in executor.output
    finally:
        peer.close()
        assert executor.stop() == 0
