"""The control plane under attack, over real DDS (issue 26 items 3 and 11).

Real router, executor and simulated-vehicle processes; the attackers are other processes
started with a ROS_HOME that holds no key (``keyless``): ``tool-router`` CLI processes, and
``test/forged_acker.py``, which forges executor acks for every selection it sees.

* A failsafe watch (``return_to_home`` when the battery drops below 1 %) survives unsigned,
  forged, stale, replayed and wrong-role cancellations (each a ``cancel_refused`` security
  record); a pilot's signed ``tool-router watch cancel`` ends it, and the trace names her.
* While forged acks are published for every selection, each of 10 operator calls
  (``tool-router call --execute`` processes: 5 a pilot's, dispatched; 5 a payload operator's
  take-off, refused) reports its true outcome; the router counts and ignores the forgeries.
* ``tool-router confirm``, ``watch list`` and ``watch cancel`` from fresh processes arrive:
  10 of 10 confirmations approve their tool; an undeliverable confirmation says so in one
  line and exits non-zero.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from procs import ROOT, NodeProcess, wait_until
from test_executor_logic import PERMS
from test_executor_nodes import RosPeer, make_operators, read_records, start

pytestmark = pytest.mark.slow  # starts ROS processes and loads MiniLM

CALLS = 10
CONFIRMS = 10


def cli(*args: str, ros_home=None, timeout_s: float = 120.0) -> subprocess.CompletedProcess:
    """A fresh ``tool-router`` process (``ros_home``: the attacker's, without keys)."""
    env = dict(os.environ)
    if ros_home is not None:
        env['ROS_HOME'] = str(ros_home)
    return subprocess.run([sys.executable, '-m', 'tool_router.cli', *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout_s, env=env)


def keyless(tmp_path):
    home = tmp_path / 'attacker_home'
    home.mkdir()
    return home


def security(traces, event: str) -> list[dict]:
    return [r for r in read_records(traces) if r.get('record') == 'security'
            and r.get('event') == event]


def watch_records(traces, rid: str) -> list[dict]:
    return [r for r in read_records(traces) if r.get('record') == 'watch'
            and r['request_id'] == rid]


@pytest.fixture  # per test: another test's simulator on the same names would be a second server
def desk_rig(tmp_path_factory):
    """An executor (signed execute, signed decisions) and the simulator, on /ctl names."""
    base = tmp_path_factory.mktemp('ctl')
    perms = base / 'permissions.yaml'
    perms.write_text(PERMS)  # critical: confirm
    operators = make_operators(base / 'operators.yaml', pilots=('alice',),
                               others=(('wanda', 'payload_operator'),))
    traces = base / 'traces'
    sim = start('tool_router.ros.sim_vehicle', ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', f'permissions_file:={perms}', '-p', f'operators_file:={operators}',
                     '-p', 'selection_topic:=/ctl/selected', '-p', 'ack_topic:=/ctl/acks',
                     '-p', 'confirm_service:=/ctl/confirm',
                     '-p', 'confirmation_topic:=/ctl/confirmation_requests',
                     '-p', 'pending_topic:=/ctl/pending', '-p', 'trace_topic:=/ctl/traces',
                     '-p', 'watch_events_topic:=/ctl/watch_events',
                     '-p', 'list_watches_service:=/ctl/list_watches',
                     '-p', 'cancel_watch_service:=/ctl/cancel_watch',
                     '-p', 'confirm_timeout_s:=60.0', '-p', 'bindings.arm_motors:=dry_run',
                     '-p', 'max_pending_confirmations_per_tool:=16',
                     '-p', 'max_parallel_requests:=16',
                     '-p', f'trace_chain_key_file:={base / "chain.key"}',
                     ready='executor ready')
    peer = RosPeer()
    peer.operators = operators
    rig = {'executor': executor, 'sim': sim, 'peer': peer, 'traces': traces,
           'operators': operators, 'base': base}
    yield rig
    peer.close()
    codes = {name: rig[name].stop() for name in ('executor', 'sim')}
    assert codes == {'executor': 0, 'sim': 0}, (codes, executor.output[-2000:])


WATCH_ARGS = ('--list-service', '/ctl/list_watches', '--cancel-service', '/ctl/cancel_watch')


def test_a_failsafe_watch_is_cancelled_only_by_a_pilots_signature(desk_rig, tmp_path):
    from tool_router.common import signing
    from tool_router.executor import auth
    from tool_router.srv import CancelWatch
    peer, traces, operators = desk_rig['peer'], desk_rig['traces'], desk_rig['operators']
    rid = peer.select('/ctl/selected', ['return_to_home'], 'return home if the battery is low',
                      conditions=['when the battery drops below 1%'], signed_by='alice')
    assert wait_until(lambda: len(watch_records(traces, rid)) == 1, 60), \
        desk_rig['executor'].output[-3000:]
    listed = cli('watch', 'list', '--json', *WATCH_ARGS)
    assert listed.returncode == 0, listed.stderr
    mine = [w for w in json.loads(listed.stdout) if w['request_id'] == rid]
    assert [(w['tool'], w['state']) for w in mine] == [('return_to_home', 'armed')]
    wid = mine[0]['watch_id']
    home = keyless(tmp_path)
    alice = next(o for o in auth.load_operators_file(operators).operators if o.name == 'alice')
    # the attacker's own key file, claiming alice's key id (key ids are on the wire)
    signing.write_key(home / 'stolen-id.key')

    attempts = {
        # a fresh process with no key at all: unsigned, claiming alice
        'unsigned': cli('watch', 'cancel', wid, '--insecure', '--operator', 'alice',
                        *WATCH_ARGS, ros_home=home),
        'bad_signature': cli('watch', 'cancel', wid, '--key', str(home / 'stolen-id.key'),
                             '--key-id', alice.key_id, '--operator', 'alice', *WATCH_ARGS,
                             ros_home=home),
        'unknown_key': cli('watch', 'cancel', '--request', rid, '--key',
                           str(home / 'stolen-id.key'), *WATCH_ARGS, ros_home=home),
        # an operator with a real key whose role may not end a failsafe
        'role_not_allowed': cli('watch', 'cancel', wid, '--operator', 'wanda', '--operators',
                                str(operators), *WATCH_ARGS),
    }
    for reason, out in attempts.items():
        assert out.returncode == 1, (reason, out.stdout, out.stderr)
        assert f'refused ({reason})' in out.stderr and 'nothing was cancelled' in out.stderr, \
            (reason, out.stderr)
    # no key, no signature: the CLI of a keyless home cannot even sign
    nokey = cli('watch', 'cancel', wid, '--operator', 'alice', *WATCH_ARGS, ros_home=home)
    assert nokey.returncode == 2 and 'no operators file' in nokey.stderr, nokey.stderr
    # signed by alice 120 s ago (a captured message held back): stale
    key = signing.read_key(auth.key_path(operators, alice))
    old = signing.sign_cancel(key, alice.key_id, wid, '', clock=lambda: time.time() - 120.0)
    stale = peer.call(CancelWatch, '/ctl/cancel_watch', CancelWatch.Request(
        watch_id=wid, operator_name='alice', key_id=old.key_id, timestamp=old.timestamp,
        nonce=old.nonce, signature=old.signature))
    assert not stale.success and 'refused (stale)' in stale.message

    still = cli('watch', 'list', '--json', *WATCH_ARGS, ros_home=home)  # listing is open
    assert [w['state'] for w in json.loads(still.stdout) if w['watch_id'] == wid] == ['armed']
    assert [e['event'] for e in watch_records(traces, rid)] == ['armed']

    ok = cli('watch', 'cancel', wid, '--operator', 'alice', '--operators', str(operators),
             *WATCH_ARGS)
    assert ok.returncode == 0 and f'cancelled {wid}' in ok.stdout, ok.stderr
    assert wait_until(lambda: len(watch_records(traces, rid)) == 2, 30)
    cancelled = watch_records(traces, rid)[1]
    assert (cancelled['event'], cancelled['reason']) == ('cancelled', 'cancelled by alice')
    # a pilot's signed cancellation, captured and replayed: refused, changes nothing
    fresh = signing.sign_cancel(key, alice.key_id, '', rid)
    request = CancelWatch.Request(request_id=rid, operator_name='alice', key_id=fresh.key_id,
                                  timestamp=fresh.timestamp, nonce=fresh.nonce,
                                  signature=fresh.signature)
    first = peer.call(CancelWatch, '/ctl/cancel_watch', request)
    assert not first.success and 'no armed watch' in first.message  # verified; nothing left
    replay = peer.call(CancelWatch, '/ctl/cancel_watch', request)
    assert 'refused (replayed_nonce)' in replay.message

    assert wait_until(lambda: len(security(traces, 'cancel_refused')) >= 6, 30)
    events = security(traces, 'cancel_refused')
    assert sorted(e['reason'] for e in events) == sorted(
        ['unsigned', 'bad_signature', 'unknown_key', 'role_not_allowed', 'stale',
         'replayed_nonce'])
    by = {e['reason']: e for e in events}
    assert (by['unsigned']['claimed_operator'], by['unsigned']['key_owner']) == ('alice', '')
    assert by['bad_signature']['key_owner'] == 'alice'  # whose key id was claimed
    assert (by['role_not_allowed']['key_owner'], by['role_not_allowed']['tools']) == \
        ('wanda', ['return_to_home'])
    assert 'safety action return_to_home' in by['role_not_allowed']['detail'] \
        or 'return_to_home (motion)' in by['role_not_allowed']['detail']
    assert by['unknown_key']['request_id'] == rid and by['unsigned']['watch_id'] == wid
    assert 'SECURITY: refused to cancel' in desk_rig['executor'].output


def test_confirmations_and_watch_calls_from_fresh_processes_arrive(desk_rig):
    from tool_router.msg import ConfirmationRequest
    peer, traces, operators = desk_rig['peer'], desk_rig['traces'], desk_rig['operators']
    asked = peer.watch(ConfirmationRequest, '/ctl/confirmation_requests')
    rids = []
    for _ in range(CONFIRMS):
        rid = peer.select('/ctl/selected', ['arm_motors'], 'arm the motors', signed_by='alice')
        rids.append(rid)
    assert wait_until(lambda: {m.request_id for m in asked} >= set(rids), 60), \
        desk_rig['executor'].output[-3000:]
    # ten operators' terminals at once: fresh processes, discovering the executor together
    outs: dict[str, subprocess.CompletedProcess] = {}

    def approve(rid: str) -> None:
        # a hang guard, not a deadline: ten fresh interpreters start at once on a busy 2-core
        # CI machine (one passed 120 s there, 2026-12-03); a late one still fails, with its
        # output in the assertion instead of a missing key
        try:
            outs[rid] = cli('confirm', rid, 'arm_motors', '--approve', '--no-wait',
                            '--operator', 'alice', '--operators', str(operators),
                            '--service', '/ctl/confirm', timeout_s=300.0)
        except subprocess.TimeoutExpired as exc:
            outs[rid] = subprocess.CompletedProcess(exc.cmd, -1, str(exc.stdout or ''),
                                                    f'timed out after 300 s: {exc.stderr!r}')
    threads = [threading.Thread(target=approve, args=(rid,)) for rid in rids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for rid in rids:
        out = outs[rid]
        assert out.returncode == 0 and f'approved arm_motors of {rid}' in out.stdout, \
            (out.stdout, out.stderr)
    finals = {}

    def look() -> bool:
        finals.update({r['request_id']: r for r in read_records(traces)
                       if r.get('record') in (None, 'request') and r['request_id'] in rids})
        return len(finals) == CONFIRMS
    assert wait_until(look, 60)
    assert [(finals[r]['tools'][0]['confirmation']['outcome'],
             finals[r]['tools'][0]['confirmation']['operator_name']) for r in rids] == \
        [('approved', 'alice')] * CONFIRMS
    # a watch listed and cancelled by fresh processes (a payload watch: a payload operator's)
    rid = peer.select('/ctl/selected', ['spotlight'], 'light up when the battery is low',
                      conditions=['when the battery drops below 1%'], signed_by='wanda')
    assert wait_until(lambda: len(watch_records(traces, rid)) == 1, 60)
    listed = cli('watch', 'list', '--json', *WATCH_ARGS)
    wid = next(w['watch_id'] for w in json.loads(listed.stdout) if w['request_id'] == rid)
    out = cli('watch', 'cancel', wid, '--operator', 'wanda', '--operators', str(operators),
              *WATCH_ARGS)
    assert out.returncode == 0 and f'cancelled {wid}' in out.stdout, out.stderr
    # nobody serves this name: the decision cannot be delivered, and the CLI says so
    lost = cli('confirm', rids[0], 'arm_motors', '--approve', '--no-wait', '--operator', 'alice',
               '--operators', str(operators), '--service', '/nobody/confirm', '--timeout', '2')
    assert lost.returncode != 0 and lost.stdout == ''
    assert len(lost.stderr.strip().splitlines()) == 1, lost.stderr
    assert 'the decision was not delivered' in lost.stderr, lost.stderr


def test_forged_acks_never_change_what_an_operator_is_told(tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray
    traces = tmp_path / 'traces'
    operators = make_operators(tmp_path / 'operators.yaml', pilots=('alice',),
                               others=(('wanda', 'payload_operator'),))
    home = keyless(tmp_path)
    attacker = NodeProcess('forged_acker', env={'PYTHONPATH': f'{ROOT / "test"}:{ROOT}',
                                                'ROS_HOME': str(home)})
    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
                         '-p', 'diagnostics_period_s:=0.5', '-p', 'executor_ack_timeout_s:=30.0')
    sim = start('tool_router.ros.sim_vehicle', ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', f'operators_file:={operators}',
                     '-p', f'trace_chain_key_file:={tmp_path / "chain.key"}',
                     ready='executor ready')
    peer = RosPeer()
    counters: dict[str, int] = {}
    lock = threading.Lock()

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if 'acks_unsigned' in values:
                with lock:
                    counters.update({k: int(v) for k, v in values.items()
                                     if k.startswith('acks_')})
    ops = ('--operators', str(operators))
    try:
        assert attacker.wait_for('forged acker ready', 60), attacker.output
        assert router.wait_for('serving /route_request', 180), router.output[-3000:]
        peer.node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
        # until the router's ack reader has matched the executor's writer (and the attacker's)
        # an ack is lost: a signed sensor read, repeated until it is reported executed and the
        # attacker's acks for it were seen by the router
        def warm() -> bool:
            out = cli('call', '--execute', '--no-wait',
                      'what is the battery level', '--operator', 'alice',
                      *ops)
            time.sleep(1.0)  # a diagnostics period or two
            with lock:
                return out.returncode == 0 and counters.get('acks_unsigned', 0) > 0
        assert wait_until(warm, 240, step_s=0.5), (router.output[-3000:],
                                                   attacker.output[-2000:], counters)
        before = attacker.output.count('forged ')
        told = []
        for i in range(CALLS):
            if i % 2 == 0:  # a pilot's call: dispatched
                out = cli('call', '--execute', '--no-wait',
                      'turn on the spotlight', '--operator', 'alice',
                          *ops)
                told.append(('alice', out.returncode, out.stdout, out.stderr))
            else:  # a payload operator's take-off: refused by the executor
                out = cli('call', '--execute', '--no-wait',
                      'take off to 20 metres', '--operator', 'wanda',
                          *ops)
                told.append(('wanda', out.returncode, out.stdout, out.stderr))
        assert wait_until(lambda: attacker.output.count('forged ') - before >= CALLS, 30)
        # the forgeries arrived while the calls waited (a router that took the first ack would
        # have told the forger's outcome), and were counted, never delivered
        counted = wait_until(lambda: counters.get('acks_unsigned', 0) >= CALLS
                             and counters.get('acks_unsigned', 0)
                             + counters.get('acks_bad_signature', 0) >= 2 * CALLS, 30)
        print(f'forged acks counted by the router: {counters}')

        # --no-wait returns at the ack: let every dispatched call finish before the nodes stop
        def finished() -> bool:
            done = {r['request_id'] for r in read_records(traces)
                    if r.get('record') in (None, 'request')}
            return all(o.rsplit('request ', 1)[1].split()[0] in done
                       for who, code, o, _ in told if who == 'alice' and code == 0)
        wait_until(finished, 60)
    finally:
        peer.close()
        codes = [p.stop() for p in (executor, sim, router)]
        attacker.stop()
    assert codes == [0, 0, 0], router.output[-2000:]

    records = read_records(traces)
    dispatched = {r['request_id'] for r in records if r.get('record') in (None, 'request')
                  and r.get('requested_by') == 'alice'
                  and [t['outcome'] for t in r['tools']] == ['dispatched']}
    refused = {r['request_id']: r for r in records if r.get('record') == 'security'
               and r.get('event') == 'execute_refused'}
    for who, code, stdout, stderr in told:
        if who == 'alice':  # told "handed to the executor", and it was
            assert code == 0 and 'handed to the executor as request' in stdout, (stdout, stderr)
            rid = stdout.rsplit('request ', 1)[1].split()[0]
            assert rid in dispatched, [str(r.get('tools'))[:600] for r in read_records(traces)
                                       if r.get('request_id') == rid]
        else:  # told the executor's own refusal, not the forger's, and nothing ran
            assert code == 1 and 'refused (role_not_allowed)' in stderr, (stdout, stderr)
            assert 'forged' not in stderr
    assert len([r for r in refused.values() if r['reason'] == 'role_not_allowed']) == CALLS // 2
    assert not set(refused) & dispatched
    assert counted, counters
    assert 'SECURITY: ignored an ack' in router.output
