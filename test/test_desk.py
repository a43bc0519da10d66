"""The operators' desk, without ROS: signed confirmations and watch cancellations."""
from __future__ import annotations


from types import SimpleNamespace

from tool_router.common import signing
from tool_router.executor import auth
from tool_router.executor.confirmations import ConfirmationBook
from tool_router.executor.desk import CancelCall, ConfirmCall, Desk


class Watches:
    """The watch manager's cancel and snapshot over a fixed set of armed watches."""

    def __init__(self) -> None:
        self.cancelled: list[tuple[str, str, str]] = []
        self.armed = [SimpleNamespace(watch_id='w-1', request_id='r-1', tool='spotlight'),
                      SimpleNamespace(watch_id='w-rth', request_id='r-2', tool='return_to_home')]

    def snapshot(self, include_ended=False):
        return list(self.armed)

    def cancel(self, watch_id='', request_id='', reason=''):
        self.cancelled.append((watch_id, request_id, reason))
        hits = [w for w in self.armed if w.watch_id == watch_id or w.request_id == request_id]
        self.armed = [w for w in self.armed if w not in hits]
        return hits


def desk(tmp_path, insecure=False):
    operators = tmp_path / 'operators.yaml'
    auth.add_operator(operators, 'alice', 'pilot')
    auth.add_operator(operators, 'pam', 'payload_operator')
    verifier = auth.ConfirmationVerifier.from_file(
        operators, {'arm_motors': 'critical', 'spotlight': 'payload',
                    'return_to_home': 'motion'}.get)
    security: list = []
    book = ConfirmationBook()
    return Desk(book, verifier, Watches(), security.append,
                insecure_confirmations=insecure), book, security, operators


def call(operators, name, rid, tool, approve=True):
    key, key_id = auth.signing_key(operators, name)
    s = signing.sign_confirmation(key, key_id, rid, tool, approve)
    return ConfirmCall(**s.model_dump(), operator_name=name)


def test_a_signed_approval_from_a_permitted_role_decides_the_waiting_tool(tmp_path):
    d, book, security, operators = desk(tmp_path)
    entry = book.open('r-1', 'arm_motors', 'critical', 30.0)
    answer = d.confirm(call(operators, 'alice', 'r-1', 'arm_motors'))
    assert (answer.success, answer.affected) == (True, ['arm_motors'])
    assert entry.event.is_set() and entry.operator_name == 'alice' and security == []


def test_a_refused_confirmation_is_recorded_and_decides_nothing(tmp_path):
    d, book, security, operators = desk(tmp_path)
    entry = book.open('r-1', 'arm_motors', 'critical', 30.0)
    answer = d.confirm(call(operators, 'pam', 'r-1', 'arm_motors'))  # payload role: no
    assert not answer.success and 'role_not_allowed' in answer.message
    assert not entry.event.is_set() and book.pending() == [('r-1', 'arm_motors')]
    assert [(r.event, r.reason, r.key_owner) for r in security] == [
        ('confirmation_refused', 'role_not_allowed', 'pam')]
    forged = call(operators, 'alice', 'r-1', 'arm_motors').model_copy(
        update={'signature': 'ab' * 32})
    assert 'bad_signature' in d.confirm(forged).message and len(security) == 2
    assert not entry.event.is_set()


def test_insecure_confirmations_take_unsigned_decisions_and_say_so(tmp_path):
    d, book, security, _ = desk(tmp_path, insecure=True)
    entry = book.open('r-1', 'spotlight', 'payload', 30.0)
    answer = d.confirm(ConfirmCall(request_id='r-1', tool='spotlight', approve=False,
                                   operator_name='bob'))
    assert answer.success and entry.operator_name == 'bob (unsigned)' and not entry.approve


def test_a_decision_for_nothing_pending_says_so(tmp_path):
    d, _, _, operators = desk(tmp_path)
    answer = d.confirm(call(operators, 'alice', 'r-9', 'arm_motors'))
    assert not answer.success and 'no pending confirmation for arm_motors' in answer.message


def cancel(operators, name, watch_id='', request_id=''):
    key, key_id = auth.signing_key(operators, name)
    s = signing.sign_cancel(key, key_id, watch_id, request_id)
    return CancelCall(**s.model_dump(), operator_name=name)


def test_cancelling_names_the_verified_operator_and_what_was_not_found(tmp_path):
    d, _, security, operators = desk(tmp_path)
    claimed = cancel(operators, 'alice', 'w-1').model_copy(update={'operator_name': 'mallory'})
    ok = d.cancel_watch(claimed)
    assert (ok.success, ok.affected) == (True, ['w-1'])
    assert d.watches.cancelled[-1] == ('w-1', '', 'cancelled by alice')  # the key's owner
    missing = d.cancel_watch(cancel(operators, 'alice', 'w-2'))
    assert not missing.success and 'no armed watch for w-2' in missing.message
    assert security == []


def test_an_empty_call_is_a_probe_that_decides_and_records_nothing(tmp_path):
    d, book, security, _ = desk(tmp_path)
    book.open('r-1', 'arm_motors', 'critical', 30.0)
    assert not d.cancel_watch(CancelCall()).success
    assert 'probe' in d.confirm(ConfirmCall(request_id='')).message
    assert (d.watches.cancelled, security, book.pending()) == ([], [], [('r-1', 'arm_motors')])


def test_a_refused_cancellation_cancels_nothing_and_is_a_security_record(tmp_path):
    d, _, security, operators = desk(tmp_path)
    unsigned = d.cancel_watch(CancelCall(watch_id='w-rth', operator_name='alice'))
    assert not unsigned.success and unsigned.message.startswith('refused (unsigned)')
    pam = d.cancel_watch(cancel(operators, 'pam', 'w-rth'))  # a failsafe, a payload role
    assert 'refused (role_not_allowed)' in pam.message
    by_request = d.cancel_watch(cancel(operators, 'pam', request_id='r-2'))
    assert 'refused (role_not_allowed)' in by_request.message
    assert d.watches.cancelled == [] and len(d.watches.armed) == 2
    assert [(r.event, r.reason, r.watch_id, r.request_id, r.tools, r.claimed_operator,
             r.key_owner) for r in security] == [
        ('cancel_refused', 'unsigned', 'w-rth', '', ['return_to_home'], 'alice', ''),
        ('cancel_refused', 'role_not_allowed', 'w-rth', '', ['return_to_home'], 'pam', 'pam'),
        ('cancel_refused', 'role_not_allowed', '', 'r-2', ['return_to_home'], 'pam', 'pam')]
    assert d.cancel_watch(cancel(operators, 'pam', 'w-1')).success  # a payload watch: hers
    assert d.cancel_watch(cancel(operators, 'alice', request_id='r-2')).affected == ['w-rth']


def test_insecure_confirmations_take_unsigned_cancellations_and_say_so(tmp_path):
    d, _, security, _ = desk(tmp_path, insecure=True)
    assert d.cancel_watch(CancelCall(watch_id='w-rth', operator_name='bob')).success
    assert d.watches.cancelled[-1] == ('w-rth', '', 'cancelled by bob (unsigned)')
    assert security == []
