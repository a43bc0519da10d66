"""The vehicle acts on the executor's calls only (issue 26 item 4; docs/SECURITY.md).

Pure: :class:`~tool_router.common.vehicle_calls.CallGuard` against every way a call can be
not the executor's. Real processes: the simulator with its default ``require_signed_calls``,
the executor, and a keyless process (empty ROS_HOME) calling the simulator directly.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tool_router.common import signing
from tool_router.common.vehicle_calls import CallGuard

HERE = Path(__file__).resolve().parent
TAKEOFF = {'height_m': 20.0}


@pytest.fixture()
def keyed(tmp_path):
    key_file = tmp_path / 'executor.key'
    signing.write_key(key_file)
    return signing.read_key(key_file), key_file


def test_the_executors_fresh_call_passes_once(keyed):
    key, key_file = keyed
    guard = CallGuard(key_file)
    s = signing.sign_call(key, 'takeoff', 'r1', TAKEOFF)
    assert guard.check('takeoff', 'r1', TAKEOFF, s.timestamp, s.nonce, s.signature) == ''
    again = guard.check('takeoff', 'r1', TAKEOFF, s.timestamp, s.nonce, s.signature)
    assert again.startswith('replayed')


@pytest.mark.parametrize('change, reason', [
    ({'signature': ''}, 'unsigned'),
    ({'tool': 'payload_release'}, 'bad signature'),        # another tool under the signature
    ({'values': {'height_m': 120.0}}, 'bad signature'),     # another height
    ({'values': {}}, 'bad signature'),                      # the argument dropped
    ({'request_id': 'r2'}, 'bad signature'),
    ({'timestamp_shift': -31.0}, 'stale'),
    ({'timestamp_shift': 31.0}, 'stale'),
    ({'other_key': True}, 'bad signature'),
])
def test_a_call_that_is_not_the_executors_is_refused(keyed, tmp_path, change, reason):
    key, key_file = keyed
    if change.get('other_key'):
        other = tmp_path / 'other.key'
        signing.write_key(other)
        key = signing.read_key(other)
    shift = change.get('timestamp_shift', 0.0)
    s = signing.sign_call(key, 'takeoff', 'r1', TAKEOFF, clock=lambda: 1_000.0 + shift)
    guard = CallGuard(key_file, clock=lambda: 1_000.0)
    got = guard.check(change.get('tool', 'takeoff'), change.get('request_id', 'r1'),
                      change.get('values', TAKEOFF), s.timestamp, s.nonce,
                      change.get('signature', s.signature))
    assert got.startswith(reason), got


def test_no_key_yet_refuses_and_the_key_is_read_once_it_exists(tmp_path):
    key_file = tmp_path / 'later.key'
    guard = CallGuard(key_file)
    assert guard.check('land', 'r', {}, 1.0, 'n', 'ab').startswith('no executor key')
    signing.write_key(key_file)
    s = signing.sign_call(signing.read_key(key_file), 'land', 'r', {})
    assert guard.check('land', 'r', {}, s.timestamp, s.nonce, s.signature) == ''


def test_the_payload_is_canonical_and_versioned():
    payload = signing.call_payload('spotlight', 'r', {'on': True, 'duration_s': 5}, 12.5, 'n')
    assert payload.splitlines()[0] == b'tool_router/call/v1'
    assert payload.splitlines()[-2:] == [b'14:duration_s=5.0', b'7:on=true']


@pytest.mark.slow
def test_a_keyless_process_cannot_make_the_vehicle_act_around_the_executor(tmp_path):
    from test_executor_nodes import UNSIGNED, RosPeer, start, wait_record
    from procs import wait_until
    from std_msgs.msg import String
    from rclpy.qos import DurabilityPolicy, QoSProfile
    ns = ('-r', '__ns:=/guarded')
    sim = start('tool_router.ros.sim_vehicle', *ns, ready='simulated vehicle ready')
    perms = tmp_path / 'permissions.yaml'  # no operator here to confirm arm_motors
    perms.write_text('version: 1\ndefaults: {none: allow, motion: allow, payload: allow, '
                     'critical: allow}\ntools: {}\n')
    executor = start('tool_router.ros.executor_node', *ns, '-p', f'trace_dir:={tmp_path}',
                     '-p', f'permissions_file:={perms}', *UNSIGNED, ready='executor ready')
    peer = RosPeer()
    try:
        assert 'signed calls: the actuators act only through sim/tool_call' in sim.output
        attacker_home = tmp_path / 'attacker'
        attacker_home.mkdir()
        out = subprocess.run(
            [sys.executable, str(HERE / 'vehicle_caller.py'), '/guarded/sim'],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, 'ROS_HOME': str(attacker_home)})
        assert out.returncode == 0, out.stderr[-3000:]
        report = {line.split(' ', 1)[0]: line.split(' ', 1)[1]
                  for line in out.stdout.splitlines() if ' ' in line}
        # the actuators' own services are not offered; tool_call refuses an unsigned call
        assert report['arm_motors_service'] == 'absent'
        assert report['tool_call_arm_motors'].startswith('False not_authorized refused: unsigned')
        assert report['tool_call_forged'].startswith('False not_authorized refused: bad signature')
        assert report['battery_status_service'].startswith('True battery')  # sensors: readable
        states = peer.watch(String, '/guarded/sim/state', QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        assert wait_until(lambda: bool(states), 30)
        assert '"phase": "disarmed"' in states[-1].data
        # the executor's own call, signed, is taken
        rid = peer.select('/guarded/tool_router/selected', ['arm_motors'], 'arm the motors')
        record = wait_record(tmp_path, rid)
        assert record['tools'][0]['outcome'] == 'dispatched', record['tools']
        assert record['tools'][0]['endpoint'] == 'call:sim/tool_call'  # relative: /guarded/sim
        assert wait_until(lambda: '"phase": "armed"' in states[-1].data, 30)
    finally:
        peer.close()
        assert {'executor': executor.stop(), 'sim': sim.stop()} == {'executor': 0, 'sim': 0}


def test_the_used_nonces_survive_a_new_guard_on_the_same_file(keyed, tmp_path):
    from tool_router.common.nonces import NonceStore

    key, key_file = keyed
    path = tmp_path / 'sim.call_nonces'
    s = signing.sign_call(key, 'takeoff', 'r1', TAKEOFF)
    first = CallGuard(key_file, nonces=NonceStore(path, 60.0))
    assert first.check('takeoff', 'r1', TAKEOFF, s.timestamp, s.nonce, s.signature) == ''
    restarted = CallGuard(key_file, nonces=NonceStore(path, 60.0))
    again = restarted.check('takeoff', 'r1', TAKEOFF, s.timestamp, s.nonce, s.signature)
    assert again.startswith('replayed')
    # the guard's own store on the file (the simulator's way) reads the same nonces
    by_file = CallGuard(key_file, nonce_file=path)
    assert by_file.nonces.keep_s == 2 * by_file.window_s and by_file.nonces.path == path
    assert by_file.check('takeoff', 'r1', TAKEOFF, s.timestamp, s.nonce,
                         s.signature).startswith('replayed')


def test_a_nonce_file_that_cannot_be_written_is_an_error(keyed, tmp_path):
    _, key_file = keyed
    blocker = tmp_path / 'a_file'
    blocker.write_text('')
    with pytest.raises(OSError):
        CallGuard(key_file, nonce_file=blocker / 'sub' / 'sim.call_nonces')


def test_a_call_signed_ahead_of_the_clock_is_remembered_as_long_as_it_is_fresh(keyed):
    """Fresh from window_s before its timestamp to window_s after: the nonce is kept 2 x."""
    key, key_file = keyed
    now = [1_000.0]
    guard = CallGuard(key_file, window_s=30.0, clock=lambda: now[0])
    s = signing.sign_call(key, 'land', 'r', {}, clock=lambda: 1_029.0)  # 29 s ahead
    assert guard.check('land', 'r', {}, s.timestamp, s.nonce, s.signature) == ''
    now[0] = 1_058.0  # 29 s after its timestamp: still fresh, so a replay must be refused
    assert guard.check('land', 'r', {}, s.timestamp, s.nonce, s.signature).startswith('replayed')


@pytest.mark.slow
def test_a_captured_call_replayed_after_the_simulator_restarts_is_refused(keyed, tmp_path):
    import json

    from test_executor_nodes import start
    key, key_file = keyed
    nonces = tmp_path / 'sim.call_nonces'
    args = ('-r', '__ns:=/replay', '-p', f'executor_key_file:={key_file}',
            '-p', f'nonce_file:={nonces}')
    s = signing.sign_call(key, 'spotlight', 'r1', {'on': True})
    captured = json.dumps({'tool': 'spotlight', 'request_id': 'r1', 'given': ['on'], 'on': True,
                           'timestamp': s.timestamp, 'nonce': s.nonce,
                           'signature': s.signature})
    attacker_home = tmp_path / 'attacker'
    attacker_home.mkdir()

    def send() -> str:
        out = subprocess.run(
            [sys.executable, str(HERE / 'vehicle_caller.py'), '/replay/sim', '--send', captured],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, 'ROS_HOME': str(attacker_home)})
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.split('tool_call ', 1)[1].strip()

    results = []
    for _ in range(2):  # the first start takes the call; the restarted one is sent it again
        sim = start('tool_router.ros.sim_vehicle', *args, ready='simulated vehicle ready')
        try:
            results.append(send())
        finally:
            assert sim.stop() == 0
    assert results[0].startswith('True'), results
    assert results[1].startswith('False not_authorized refused: replayed'), results
