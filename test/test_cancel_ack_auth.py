"""Signed watch cancellations and executor-signed acks, without ROS (issue 26 items 3 and 11).

The canonical bytes of both payloads byte for byte; every way a cancellation is refused (and
that a failsafe watch needs a pilot); that the router's ack book takes only the executor's
signed ack for the selection it published, and counts what it ignores.
"""
from __future__ import annotations

import hashlib
import hmac
import threading
from types import SimpleNamespace

import pytest

from test_auth import Clock

from tool_router.common import signing
from tool_router.executor import auth
from tool_router.ros.acks import AckBook

RISK = {'return_to_home': 'motion', 'land': 'motion', 'spotlight': 'payload',
        'gimbal_control': 'payload', 'emergency_stop': 'critical', 'takeoff': 'motion'}


@pytest.fixture
def ops(tmp_path):
    path = tmp_path / 'operators.yaml'
    return (path, *(auth.add_operator(path, name, role) for name, role in
                    (('alice', 'pilot'), ('bob', 'payload_operator'), ('olga', 'observer'))))


def key_of(path, op) -> bytes:
    return signing.read_key(auth.key_path(path, op))


def verifier(path, clock):
    return auth.ConfirmationVerifier.from_file(path, RISK.__getitem__, 30.0, clock)


def cancel(path, op, watch_id='w-1', request_id='', clock=None):
    return signing.sign_cancel(key_of(path, op), op.key_id, watch_id, request_id,
                               clock=clock or Clock())


def check(v, s, tools=('return_to_home',)):
    return v.verify_cancel(s.watch_id, s.request_id, s.timestamp, s.nonce, s.key_id,
                           s.signature, list(tools))


def test_cancel_payload_is_the_documented_length_prefixed_fields():
    payload = signing.cancel_payload('w-3f9a', '', 1800000000.5, 'nonce-0123456789abcd',
                                     'k-alice-3f9a1c')
    assert payload == (b'tool_router/cancel/v1\n6:w-3f9a\n0:\n17:1800000000.500000\n'
                       b'20:nonce-0123456789abcd\n14:k-alice-3f9a1c\n')


def test_ack_payload_is_the_documented_length_prefixed_fields():
    payload = signing.ack_payload('r-42', False, 'refused (unsigned): no key', 1800000000,
                                  5000, 'ab' * 4)
    assert payload == (b'tool_router/ack/v1\n4:r-42\n7:refused\n26:refused (unsigned): no key\n'
                       b'20:1800000000.000005000\n8:abababab\n')
    key = bytes(range(32))
    msg = SimpleNamespace(request_id='r-42', accepted=False, reason='refused (unsigned): no key',
                          stamp=SimpleNamespace(sec=1800000000, nanosec=5000),
                          selection_signature='ab' * 4, signature='')
    msg.signature = signing.ack_signature(msg, key)
    assert msg.signature == hmac.new(key, payload, hashlib.sha256).hexdigest()
    assert signing.ack_signature_ok(key, msg)
    for field, value in (('accepted', True), ('reason', 'held'), ('request_id', 'r-43'),
                         ('selection_signature', 'cd' * 4)):
        changed = SimpleNamespace(**{**vars(msg), field: value})
        assert not signing.ack_signature_ok(key, changed), field
    assert not signing.ack_signature_ok(bytes(32), msg)  # another key


def test_a_pilots_signed_cancellation_verifies_once(ops):
    path, alice, *_ = ops
    v = verifier(path, Clock())
    s = cancel(path, alice)
    assert check(v, s).model_dump() == {'ok': True, 'operator_name': 'alice', 'reason': '',
                                        'detail': ''}
    assert check(v, s).reason == 'replayed_nonce'


@pytest.mark.parametrize('change, reason', [
    ({'signature': ''}, 'malformed'),
    ({'signature': '', 'key_id': ''}, 'unsigned'),
    ({'signature': 'ab' * 32}, 'bad_signature'),
    ({'watch_id': 'w-2'}, 'bad_signature'),          # signed for another watch
    ({'request_id': 'r-1'}, 'bad_signature'),        # widened to a whole request
    ({'key_id': 'k-mallory-123456'}, 'unknown_key'),
    ({'nonce': 'short'}, 'malformed'),
])
def test_tampered_forged_or_unsigned_cancellations_are_refused(ops, change, reason):
    path, alice, *_ = ops
    v = verifier(path, Clock())
    s = cancel(path, alice).model_copy(update=change)
    assert check(v, s).reason == reason


def test_a_stale_cancellation_is_refused(ops):
    path, alice, *_ = ops
    clock = Clock()
    v = verifier(path, clock)
    s = cancel(path, alice, clock=clock)
    clock.t += 31.0
    assert check(v, s).reason == 'stale'


def test_a_confirmation_signature_is_no_cancellation(ops):
    path, alice, *_ = ops
    v = verifier(path, Clock())
    c = signing.sign_confirmation(key_of(path, alice), alice.key_id, 'w-1', '', True,
                                  clock=Clock())
    assert v.verify_cancel('w-1', '', c.timestamp, c.nonce, c.key_id, c.signature,
                           ['return_to_home']).reason == 'bad_signature'


def test_failsafe_watches_need_a_pilot_and_roles_cover_the_watched_tools(ops):
    path, alice, bob, olga = ops
    v = verifier(path, Clock())
    # a payload operator may cancel a payload watch, not a failsafe nor a motion watch
    assert check(v, cancel(path, bob), ['spotlight']).ok
    refused = check(v, cancel(path, bob), ['return_to_home'])
    assert (refused.reason, refused.operator_name) == ('role_not_allowed', 'bob')
    assert 'may not cancel a watch of return_to_home (motion)' in refused.detail
    assert check(v, cancel(path, bob), ['spotlight', 'land']).reason == 'role_not_allowed'
    # an observer cancels nothing
    assert check(v, cancel(path, olga), ['spotlight']).reason == 'role_not_allowed'
    # every safety action, whatever its risk class, needs the pilot role
    for tool in ('land', 'return_to_home', 'hold_position', 'emergency_stop'):
        RISK.setdefault('hold_position', 'motion')
        assert check(v, cancel(path, alice), [tool]).ok, tool


def test_the_safety_rule_applies_even_where_a_role_covers_the_risk_class(tmp_path):
    path = tmp_path / 'operators.yaml'
    data = auth.OperatorsFile(roles={'pilot': ['none', 'motion', 'payload', 'critical'],
                                     'flyer': ['none', 'motion', 'payload', 'critical']})
    auth.save_operators_file(path, data)
    flyer = auth.add_operator(path, 'fred', 'flyer')
    v = verifier(path, Clock())
    verdict = check(v, cancel(path, flyer), ['return_to_home'])
    assert verdict.reason == 'role_not_allowed'
    assert 'safety action return_to_home (needs pilot)' in verdict.detail
    assert check(v, cancel(path, flyer), ['takeoff']).ok  # not a failsafe: the role decides


def _ack(key, rid='r-1', accepted=True, reason='', selection='ab' * 32, sign=True):
    msg = SimpleNamespace(request_id=rid, accepted=accepted, reason=reason,
                          stamp=SimpleNamespace(sec=1, nanosec=2), selection_signature=selection,
                          signature='')
    if sign:
        msg.signature = signing.ack_signature(msg, key)
    return msg


def test_the_ack_book_takes_only_the_executors_ack_of_our_selection():
    key = bytes(range(32))
    acks = AckBook()
    acks.key = key
    waiter = acks.park('r-1', 30.0)
    acks.expect('r-1', 'ab' * 32)
    got: list = []
    t = threading.Thread(target=lambda: got.append(waiter.wait()))
    t.start()
    forged = [
        (_ack(key, accepted=False, reason='refused', sign=False), 'unsigned'),
        (_ack(bytes(32), accepted=False, reason='refused'), 'bad signature'),
        (SimpleNamespace(**{**vars(_ack(key)), 'accepted': False}), 'bad signature'),
        # the executor's genuine refusal of a forged selection that copied the request id
        (_ack(key, accepted=False, reason='bad_router_signature', selection='cd' * 32),
         'answers another selection'),
    ]
    for msg, why in forged:
        assert acks.receive(msg) == why
    assert waiter.outcome is None and not got
    assert acks.receive(_ack(key, reason='on disk')) == ''
    t.join(30)
    assert got == [(True, 'on disk')]
    acks.release(waiter)
    assert acks.counters() == {'ack_waiting': 0, 'ack_timeouts': 0, 'acks_unsigned': 1,
                               'acks_bad_signature': 2, 'acks_other_selection': 1,
                               'acks_replayed': 0}
    assert acks.receive(_ack(key, rid='nobody-waits', sign=False)) == ''  # late: not counted


def test_the_executors_ack_of_a_first_request_does_not_answer_the_same_request_resent():
    key = bytes(range(32))
    acks = AckBook()
    acks.key = key
    first = acks.park('r-1', 30.0)
    acks.expect('r-1', 'ab' * 32)
    accepted = _ack(key, reason='on disk')
    assert acks.receive(accepted) == '' and first.wait() == (True, 'on disk')
    acks.release(first)
    # the same signed request again: same tools, so the same router signature
    second = acks.park('r-1', 30.0)
    acks.expect('r-1', 'ab' * 32)
    assert acks.receive(accepted) == 'replayed'  # the old "accepted", replayed
    refusal = _ack(key, accepted=False, reason='refused (replayed_nonce)')
    refusal.stamp.nanosec = 3
    refusal.signature = signing.ack_signature(refusal, key)
    assert acks.receive(refusal) == ''
    assert second.wait() == (False, 'refused (replayed_nonce)')
    assert acks.counters()['acks_replayed'] == 1


def test_an_ack_before_the_selection_went_out_is_not_ours():
    key = bytes(range(32))
    acks = AckBook()
    acks.key = key
    acks.park('r-1', 30.0)  # parked, but the selection's signature is not known yet
    assert acks.receive(_ack(key)) == 'answers another selection'
