"""Signed confirmations without ROS: operator keys, and every way a confirmation is refused."""
from __future__ import annotations

import os

import pytest

from tool_router.common.errors import ConfigError
from tool_router.common import signing
from tool_router.executor import auth

RISK = {'arm_motors': 'critical', 'payload_release': 'critical', 'winch_control': 'payload',
        'takeoff': 'motion'}


class Clock:
    def __init__(self, t: float = 1_800_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def ops(tmp_path):
    path = tmp_path / 'operators.yaml'
    alice = auth.add_operator(path, 'alice', 'pilot')
    bob = auth.add_operator(path, 'bob', 'payload_operator')
    return path, alice, bob


def verifier(path, clock):
    return auth.ConfirmationVerifier.from_file(path, RISK.__getitem__, 30.0, clock)


def signed(path, op, rid='r1', tool='arm_motors', approve=True, clock=None):
    key = signing.read_key(auth.key_path(path, op))
    return signing.sign_confirmation(key, op.key_id, rid, tool, approve, clock or Clock())


def check(v, s, tools=('arm_motors',)):
    return v.verify(s.request_id, s.tool, s.approve, s.timestamp, s.nonce, s.key_id,
                    s.signature, list(tools))


def test_add_writes_owner_only_key_and_never_puts_the_key_in_the_operators_file(ops):
    path, alice, _ = ops
    key_file = auth.key_path(path, alice)
    assert oct(key_file.stat().st_mode & 0o777) == '0o600'
    key_hex = key_file.read_text().strip()
    assert len(key_hex) == 64
    assert key_hex not in path.read_text()
    assert [o.name for o in auth.load_operators_file(path).operators] == ['alice', 'bob']


def test_valid_signature_verifies_once(ops):
    path, alice, _ = ops
    clock = Clock()
    v = verifier(path, clock)
    s = signed(path, alice, clock=clock)
    verdict = check(v, s)
    assert verdict.ok and verdict.operator_name == 'alice'
    again = check(v, s)
    assert (again.ok, again.reason) == (False, 'replayed_nonce')


@pytest.mark.parametrize('change, reason', [
    ({'tool': 'takeoff'}, 'bad_signature'),          # signature for another tool
    ({'request_id': 'r2'}, 'bad_signature'),         # for another request
    ({'approve': False}, 'bad_signature'),           # decision flipped
    ({'signature': '0' * 64}, 'bad_signature'),      # forged
    ({'key_id': 'k-mallory-000000'}, 'unknown_key'),
    ({'signature': 'zz'}, 'malformed'),
    ({'nonce': 'short'}, 'malformed'),
    ({'key_id': '', 'signature': ''}, 'unsigned'),
])
def test_tampered_or_forged_confirmations_are_refused(ops, change, reason):
    path, alice, _ = ops
    clock = Clock()
    s = signed(path, alice, clock=clock).model_copy(update=change)
    verdict = check(verifier(path, clock), s)
    assert (verdict.ok, verdict.reason) == (False, reason)


def test_stale_and_future_signatures_are_refused(ops):
    path, alice, _ = ops
    clock = Clock()
    v = verifier(path, clock)
    old = signed(path, alice, clock=clock)
    clock.t += 31
    assert check(v, old).reason == 'stale'
    future = signed(path, alice, clock=Clock(clock.t + 60))
    assert check(v, future).reason == 'stale'
    assert check(v, signed(path, alice, clock=clock)).ok


def test_role_decides_which_risk_classes_an_operator_may_approve(ops):
    path, _, bob = ops
    clock = Clock()
    v = verifier(path, clock)
    verdict = check(v, signed(path, bob, clock=clock))
    assert (verdict.ok, verdict.reason) == (False, 'role_not_allowed')
    assert 'arm_motors (critical)' in verdict.detail
    assert check(v, signed(path, bob, tool='winch_control', clock=clock),
                 ['winch_control']).ok
    # '' covers every pending tool: one the role may not approve refuses the whole call
    assert check(v, signed(path, bob, tool='', clock=clock),
                 ['winch_control', 'payload_release']).reason == 'role_not_allowed'
    # any verified operator may deny
    assert check(v, signed(path, bob, approve=False, clock=clock)).ok


def test_revoked_key_verifies_nothing_and_its_file_is_gone(ops):
    path, alice, _ = ops
    clock = Clock()
    s = signed(path, alice, clock=clock)
    auth.revoke_operator(path, 'alice')
    assert not auth.key_path(path, alice).exists()
    assert check(verifier(path, clock), s).reason == 'revoked_key'
    assert auth.add_operator(path, 'alice', 'pilot').key_id != alice.key_id


@pytest.mark.parametrize('mode', [0o640, 0o604, 0o644])
def test_key_files_readable_by_others_are_refused(ops, mode):
    path, alice, _ = ops
    os.chmod(auth.key_path(path, alice), mode)
    with pytest.raises(ConfigError, match='group or others') as err:
        verifier(path, Clock())
    assert 'chmod 600' in err.value.hint


def test_operators_file_errors_name_the_field(tmp_path):
    path = tmp_path / 'operators.yaml'
    path.write_text('version: 1\noperators:\n  - {name: a, role: admiral, key_id: k-a-1, '
                    'key_file: a.key}\n')
    with pytest.raises(ConfigError, match="unknown role 'admiral'"):
        auth.load_operators_file(path)
    path.write_text('version: 1\noperators:\n  - {name: a, role: pilot, key_id: k-a-1, '
                    'key_file: a.key, secret: x}\n')
    with pytest.raises(ConfigError, match='operators.0.secret'):
        auth.load_operators_file(path)


def test_no_operators_file_means_every_confirmation_is_refused(tmp_path):
    v = auth.ConfirmationVerifier.from_file(tmp_path / 'none.yaml', RISK.__getitem__)
    s = signing.SignedConfirmation(request_id='r', tool='arm_motors', approve=True,
                                timestamp=0.0, nonce='n' * 20, key_id='k-x-1',
                                signature='a' * 64)
    assert check(v, s).reason == 'unknown_key'
    assert v.active_operators == []
