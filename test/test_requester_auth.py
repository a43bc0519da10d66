"""Requester signatures without ROS: the canonical bytes, and every way an execute is refused."""
from __future__ import annotations

import hashlib
import hmac
import math

import pytest

from test_auth import Clock

from tool_router.common.errors import ConfigError
from tool_router.common import signing
from tool_router.executor import auth

RISK = {'arm_motors': 'critical', 'winch_control': 'payload', 'takeoff': 'motion',
        'battery_status': 'none'}


@pytest.fixture
def ops(tmp_path):
    path = tmp_path / 'operators.yaml'
    return (path, *(auth.add_operator(path, name, role) for name, role in
                    (('alice', 'pilot'), ('bob', 'payload_operator'), ('olga', 'observer'))))


def key_of(path, op) -> bytes:
    return signing.read_key(auth.key_path(path, op))


def signed(path, op, rid='r1', text='take off to 20 metres', clock=None):
    return signing.sign_request(key_of(path, op), op.key_id, rid, text, clock=clock or Clock())


def check(v, s, rid='r1', text='take off to 20 metres', tools=('takeoff',), max_age_s=None):
    return v.verify_request(rid, text, s.timestamp, s.nonce, s.key_id, s.signature,
                            list(tools), max_age_s)


def verifier(path, clock):
    return auth.ConfirmationVerifier.from_file(path, RISK.__getitem__, 30.0, clock)


def test_canonical_bytes_are_the_documented_length_prefixed_fields():
    payload = signing.execute_payload('r-42', 'take off\nto 20 m', True, 1800000000.5,
                                      'nonce-0123456789abcd', 'k-alice-3f9a1c', 'lcr', 3)
    assert payload == (b'tool_router/execute/v2\n'
                       b'4:r-42\n'
                       b'16:take off\nto 20 m\n'
                       b'7:execute\n'
                       b'17:1800000000.500000\n'
                       b'20:nonce-0123456789abcd\n'
                       b'14:k-alice-3f9a1c\n'
                       b'3:lcr\n'
                       b'1:3\n')
    # the defaults: the router's policy and bound
    assert signing.execute_payload('r', 't', True, 0.0, 'n', 'k').endswith(b'\n0:\n1:0\n')
    # lengths count UTF-8 bytes, not characters
    assert b'\n5:h\xc3\xb6he\n' in signing.execute_payload('r', 'h\u00f6he', True, 0.0, 'n', 'k')
    # the flag is part of it, and it differs from a confirmation's domain
    assert b'\n5:route\n' in signing.execute_payload('r', 't', False, 0.0, 'n', 'k')
    assert signing.execute_payload('r', 't', True, 0.0, 'n', 'k') != \
        signing.confirmation_payload('r', 't', True, 0.0, 'n', 'k')


def test_the_policy_and_the_tool_bound_asked_for_are_signed(ops, tmp_path):
    """Changed in flight, a signed request's policy or max_tools no longer verify."""
    path, alice, *_ = ops
    clock = Clock()
    key = key_of(path, alice)
    s = signing.sign_request(key, alice.key_id, 'r9', 'take a photo', clock=clock, policy='lcr',
                             max_tools=2)
    v = verifier(path, clock)
    for policy, bound in (('cdbv1', 2), ('lcr', 8), ('', 0)):
        verdict = v.verify_request('r9', 'take a photo', s.timestamp, s.nonce, s.key_id,
                                   s.signature, ['battery_status'], policy=policy, max_tools=bound)
        assert not verdict.ok and verdict.reason == 'bad_signature', (policy, bound)
    assert v.verify_request('r9', 'take a photo', s.timestamp, s.nonce, s.key_id, s.signature,
                            ['battery_status'], policy='lcr', max_tools=2).ok


def test_a_newline_cannot_move_bytes_between_fields():
    a = signing.execute_payload('a\nb', 'c', True, 1.0, 'n', 'k')
    b = signing.execute_payload('a', 'b\nc', True, 1.0, 'n', 'k')
    assert a != b


def test_signature_is_hmac_sha256_over_the_payload(ops):
    path, alice, *_ = ops
    s = signed(path, alice)
    expected = hmac.new(key_of(path, alice), signing.execute_payload(
        'r1', 'take off to 20 metres', True, s.timestamp, s.nonce, alice.key_id),
        hashlib.sha256).hexdigest()
    assert s.signature == expected and s.key_id == alice.key_id


def test_valid_request_verifies_once_and_names_the_operator(ops):
    path, alice, *_ = ops
    clock = Clock()
    v = verifier(path, clock)
    s = signed(path, alice, clock=clock)
    verdict = check(v, s, tools=['takeoff', 'arm_motors', 'battery_status'])
    assert (verdict.ok, verdict.operator_name) == (True, 'alice')
    again = check(v, s)
    assert (again.ok, again.reason) == (False, 'replayed_nonce')


@pytest.mark.parametrize('where, change, reason', [
    ('call', {'text': 'take off to 200 metres'}, 'bad_signature'),  # text changed
    ('call', {'rid': 'r2'}, 'bad_signature'),                       # another request id
    ('sig', {'signature': 'ab' * 32}, 'bad_signature'),             # forged
    ('sig', {'key_id': 'k-mallory-000000'}, 'unknown_key'),
    ('sig', {'signature': 'zz'}, 'malformed'),
    ('sig', {'nonce': 'short'}, 'malformed'),
    ('sig', {'timestamp': math.nan}, 'malformed'),
    ('sig', {'key_id': '', 'signature': ''}, 'unsigned'),
])
def test_tampered_forged_or_unsigned_requests_are_refused(ops, where, change, reason):
    path, alice, *_ = ops
    clock = Clock()
    s = signed(path, alice, clock=clock)
    kwargs = {}
    if where == 'sig':
        s = s.model_copy(update=change)
    else:
        kwargs = change
    verdict = check(verifier(path, clock), s, **kwargs)
    assert (verdict.ok, verdict.reason) == (False, reason)


def test_a_confirmation_signature_is_not_a_requester_signature(ops):
    path, alice, *_ = ops
    clock = Clock()
    c = signing.sign_confirmation(key_of(path, alice), alice.key_id, 'r1', 'take off to 20 metres',
                               True, clock)
    s = signing.RequesterSignature(key_id=c.key_id, timestamp=c.timestamp, nonce=c.nonce,
                                signature=c.signature)
    assert check(verifier(path, clock), s).reason == 'bad_signature'


def test_stale_and_future_requests_are_refused_with_their_own_window(ops):
    path, alice, *_ = ops
    clock = Clock()
    v = verifier(path, clock)
    old = signed(path, alice, clock=Clock(clock.t - 31))
    assert check(v, old).reason == 'stale'
    assert check(v, signed(path, alice, clock=Clock(clock.t + 60))).reason == 'stale'
    assert check(v, old, max_age_s=45.0).ok  # execute_max_age_s, not confirm_max_age_s
    assert check(v, signed(path, alice, clock=Clock(clock.t - 5)), max_age_s=2.0).reason \
        == 'stale'


def test_role_must_cover_every_risk_class_of_the_selection(ops):
    path, _, bob, olga = ops
    clock = Clock()
    v = verifier(path, clock)
    verdict = check(v, signed(path, bob, clock=clock), tools=['winch_control', 'takeoff'])
    assert (verdict.ok, verdict.reason) == (False, 'role_not_allowed')
    assert 'takeoff (motion)' in verdict.detail and 'may not dispatch' in verdict.detail
    assert verdict.operator_name == 'bob'  # who it was, for the security record
    assert check(v, signed(path, bob, clock=clock),
                 tools=['winch_control', 'battery_status']).ok
    assert check(v, signed(path, olga, clock=clock),
                 tools=['battery_status']).reason == 'role_not_allowed'


def test_revoked_key_asks_for_nothing(ops):
    path, alice, *_ = ops
    clock = Clock()
    s = signed(path, alice, clock=clock)
    auth.revoke_operator(path, 'alice')
    assert check(verifier(path, clock), s).reason == 'revoked_key'


def test_signing_key_by_operator_key_id_or_file(ops, tmp_path):
    path, alice, bob, _ = ops
    assert auth.signing_key(path, 'alice') == (key_of(path, alice), alice.key_id)
    assert auth.signing_key(path, 'nobody', key_id=bob.key_id) == (key_of(path, bob), bob.key_id)
    key_file = auth.key_path(path, bob)
    assert auth.signing_key(tmp_path / 'none.yaml', key_file=key_file) == \
        (key_of(path, bob), key_file.stem)
    with pytest.raises(ConfigError, match="operator 'mallory' has no active key"):
        auth.signing_key(path, 'mallory')
    with pytest.raises(ConfigError, match='no operators file') as err:
        auth.signing_key(tmp_path / 'none.yaml', 'alice')
    assert 'tool-router operator add alice' in err.value.hint
    auth.revoke_operator(path, 'alice')
    with pytest.raises(ConfigError, match='no active key'):
        auth.signing_key(path, 'alice')


def test_execute_security_record_keeps_old_confirmation_records_readable():
    old = {'schema_version': '1.0', 'record': 'security', 'event': 'confirmation_refused',
           'stamp': 1.0, 'request_id': 'r', 'tool': 'arm_motors', 'approve': True,
           'claimed_operator': 'x', 'key_id': '', 'reason': 'unsigned'}
    assert auth.SecurityRecord.model_validate(old).tools == []
    new = auth.SecurityRecord(event='execute_refused', stamp=1.0, request_id='r',
                              tools=['takeoff'], claimed_operator='', key_id='k-x-1',
                              reason='unknown_key')
    assert new.approve is False and new.tool == ''


def test_router_signature_covers_the_tools_conditions_request_and_nonce(tmp_path):
    path = tmp_path / 'keys' / 'router.key'
    key = signing.router_key(path, create=True)
    assert (path.stat().st_mode & 0o777) == 0o600
    assert signing.router_key(path, create=True) == key  # made once, then read
    args = ('r1', 'turn on the spotlight', ['spotlight'], [0], [''], 'nonce-0123456789abcd')
    assert signing.selection_payload(*args) == (b'tool_router/select/v1\n'
                                             b'2:r1\n'
                                             b'21:turn on the spotlight\n'
                                             b'13:["spotlight"]\n'
                                             b'3:[0]\n'
                                             b'4:[""]\n'
                                             b'20:nonce-0123456789abcd\n')
    sig = signing.sign_selection(key, *args)
    assert sig == hmac.new(key, signing.selection_payload(*args), hashlib.sha256).hexdigest()
    assert signing.router_signature_ok(key, sig, *args)
    assert signing.router_signature_ok(key, sig.upper(), *args)
    changed = [
        ('r2', *args[1:]),
        (args[0], 'turn on the speaker', *args[2:]),
        (*args[:2], ['speaker_broadcast'], *args[3:]),
        (*args[:2], ['spotlight', 'land'], [0, 1], ['', ''], args[5]),
        (*args[:3], [1], *args[4:]),
        (*args[:4], ['battery below 20%'], args[5]),
        (*args[:5], 'another-nonce-0123456'),
    ]
    for other in changed:
        assert not signing.router_signature_ok(key, sig, *other), other
    assert not signing.router_signature_ok(b'\x01' * 32, sig, *args)  # another router's key
    assert not signing.router_signature_ok(key, '', *args)
    assert not signing.router_signature_ok(key, 'é' * 64, *args)  # off the network: no TypeError


def test_a_missing_router_key_is_a_clear_error_and_is_not_made_unless_asked(tmp_path):
    path = tmp_path / 'router.key'
    with pytest.raises(ConfigError, match='cannot read key file'):
        signing.router_key(path)
    assert not path.exists()
    path.write_text('ab' * 32 + '\n')
    path.chmod(0o644)
    with pytest.raises(ConfigError, match='group or others'):
        signing.router_key(path)
