"""Who may say yes, over real DDS: an executor process, and this test process as the network.

Unsigned, forged, replayed, stale and wrong-role confirmations from another process approve
(and deny) nothing and are traced as security events; one signed confirmation dispatches the
tool exactly once; no key ever appears in a log, a trace file or the operators file.
"""
from __future__ import annotations

import json
import time

import pytest
from procs import wait_until
from test_executor_logic import PERMS
from test_executor_nodes import UNSIGNED, RosPeer, make_operators, read_records, start

pytestmark = pytest.mark.slow  # starts ROS processes


def test_only_a_signed_confirmation_from_a_permitted_role_dispatches(tmp_path):
    from std_msgs.msg import String
    from tool_router.common import signing
    from tool_router.executor import auth
    from tool_router.msg import ConfirmationRequest

    operators = make_operators(tmp_path / 'operators.yaml', pilots=('alice',),
                               others=(('wanda', 'payload_operator'),))
    perms = tmp_path / 'permissions.yaml'
    perms.write_text(PERMS)
    traces = tmp_path / 'traces'
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', f'permissions_file:={perms}', '-p', f'operators_file:={operators}',
                     '-p', 'selection_topic:=/sec/selected', '-p', 'confirm_service:=/sec/confirm',
                     '-p', 'confirmation_topic:=/sec/confirmation_requests',
                     '-p', 'trace_topic:=/sec/traces', '-p', 'confirm_timeout_s:=30.0',
                     '-p', 'bindings.arm_motors:=topic:/sec/arm',
                     '-p', f'trace_chain_key_file:={tmp_path / "chain.key"}',
                     ready='executor ready')
    peer = RosPeer()
    peer.operators = operators
    try:
        asked = peer.watch(ConfirmationRequest, '/sec/confirmation_requests')
        armed = peer.watch(String, '/sec/arm')
        rid = peer.select('/sec/selected', ['arm_motors'], 'arm the motors. operator approved',
                          signed_by='alice')  # who asked; the confirmation is another matter
        assert wait_until(lambda: any(m.request_id == rid for m in asked), 30), executor.output

        def confirm(*args, **kwargs):
            return peer.confirm(rid, 'arm_motors', *args, service='/sec/confirm', **kwargs)

        refused = {
            'unsigned approve': confirm(True, 'alice', sign=False),
            'unsigned deny': confirm(False, 'alice', sign=False),
            'forged': confirm(True, 'alice', signature='ab' * 32),
            'signed for another tool': confirm(True, 'alice', sign=False,
                                               **_signed(operators, rid, tool='takeoff')),
            'stale': confirm(True, 'alice', sign=False,
                             **_signed(operators, rid, age_s=120.0)),
            'wrong role': confirm(True, 'wanda'),
            'unknown key': confirm(True, 'alice', key_id='k-mallory-123456'),
        }
        for what, resp in refused.items():
            assert not resp.success and list(resp.affected_tools) == [], (what, resp.message)
            assert resp.message.startswith('refused ('), (what, resp.message)

        valid = peer.confirm(rid, 'arm_motors', True, 'alice', service='/sec/confirm',
                             sign=False)
        assert not valid.success  # still unsigned: just to be sure nothing approved it so far
        fields = _signed(operators, rid)
        ok = confirm(True, 'mallory-claims-this', sign=False, **fields)
        assert ok.success and list(ok.affected_tools) == ['arm_motors'], ok.message
        replay = confirm(True, 'alice', sign=False, **fields)
        assert not replay.success and 'replayed_nonce' in replay.message

        assert wait_until(lambda: len(armed) == 1, 30), executor.output
        # the final record is written after the dispatch the peer has already seen: wait for it
        # (9 security records alone can be on disk first)
        assert wait_until(lambda: any(r.get('record') in (None, 'request')
                                      for r in _wait_records(traces, rid, 1)), 30)
        recs = [r for r in _wait_records(traces, rid, 10) if r.get('record') in (None, 'request')]
        assert len(recs) == 1
        tool = recs[0]['tools'][0]
        assert (tool['outcome'], tool['confirmation']['outcome']) == ('dispatched', 'approved')
        assert tool['confirmation']['operator_name'] == 'alice'  # the key's owner, not the claim
    finally:
        code = executor.stop()
        peer.close()
    assert code == 0
    assert len(armed) == 1  # dispatched once, counted after the executor has stopped

    events = [r for r in read_records(traces) if r.get('record') == 'security']
    reasons = sorted(e['reason'] for e in events)
    assert reasons == sorted(['unsigned', 'unsigned', 'bad_signature', 'bad_signature', 'stale',
                              'role_not_allowed', 'unknown_key', 'unsigned', 'replayed_nonce'])
    assert {e['request_id'] for e in events} == {rid}
    role = next(e for e in events if e['reason'] == 'role_not_allowed')
    assert (role['claimed_operator'], role['key_owner']) == ('wanda', 'wanda')
    assert 'SECURITY: refused confirmation' in executor.output
    # the executor's trace lines form an intact chain under its signed manifest
    from tool_router.executor.chain import verify_directory
    report = verify_directory(traces, signing.read_key(tmp_path / 'chain.key'))
    assert report.ok and report.records >= 10 and report.manifests == 1, report

    # keys never leave their files: not in the log, the traces or the operators file
    keys = [auth.key_path(operators, o).read_text().strip()
            for o in auth.load_operators_file(operators).operators]
    keys.append((tmp_path / 'chain.key').read_text().strip())
    haystacks = {'executor log': executor.output, 'operators file': operators.read_text()}
    haystacks.update({str(p): p.read_text() for p in traces.glob('*')})
    for key in keys:
        for name, text in haystacks.items():
            assert key not in text and key[:16] not in text, name


def _signed(operators, rid, tool='arm_motors', age_s=0.0) -> dict:
    """ConfirmTool fields signed by alice over ``tool`` (``age_s`` seconds ago)."""
    from tool_router.common import signing
    from tool_router.executor import auth
    op = next(o for o in auth.load_operators_file(operators).operators if o.name == 'alice')
    s = signing.sign_confirmation(signing.read_key(auth.key_path(operators, op)), op.key_id, rid,
                               tool, True, clock=lambda: time.time() - age_s)
    return {'key_id': s.key_id, 'timestamp': s.timestamp, 'nonce': s.nonce,
            'signature': s.signature}


def _wait_records(directory, rid, count, timeout_s=30.0):
    box: list[dict] = []

    def look() -> bool:
        box[:] = [r for r in read_records(directory) if r.get('request_id') == rid]
        return len(box) >= count
    assert wait_until(look, timeout_s), json.dumps(box)[:2000]
    return box


def test_insecure_confirmations_are_logged_loudly_and_recorded_as_unsigned(tmp_path):
    from tool_router.msg import ConfirmationRequest
    traces = tmp_path / 'traces'
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', 'insecure_confirmations:=true', '-p', 'selection_topic:=/ins/selected',
                     *UNSIGNED,
                     '-p', 'confirm_service:=/ins/confirm',
                     '-p', 'confirmation_topic:=/ins/confirmation_requests',
                     '-p', 'trace_topic:=/ins/traces',
                     '-p', 'bindings.arm_motors:=dry_run', ready='executor ready')
    peer = RosPeer()
    try:
        assert executor.output.count('INSECURE CONFIRMATIONS') >= 3
        assert executor.output.count('UNSIGNED EXECUTE') >= 3
        asked = peer.watch(ConfirmationRequest, '/ins/confirmation_requests')
        rid = peer.select('/ins/selected', ['arm_motors'])
        assert wait_until(lambda: any(m.request_id == rid for m in asked), 30), executor.output
        resp = peer.confirm(rid, 'arm_motors', True, 'bench', service='/ins/confirm')
        assert resp.success, resp.message
        rec = _wait_records(traces, rid, 1)[0]
        assert rec['tools'][0]['confirmation']['operator_name'] == 'bench (unsigned)'
    finally:
        peer.close()
        code = executor.stop()
    assert code == 0
