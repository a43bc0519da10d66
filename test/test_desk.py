"""The operators' desk, without ROS: signed confirmations and watch cancellations."""
from __future__ import annotations


from tool_router.common import signing
from tool_router.executor import auth
from tool_router.executor.confirmations import ConfirmationBook
from tool_router.executor.desk import CancelCall, ConfirmCall, Desk


class Watches:
    def __init__(self) -> None:
        self.cancelled: list[tuple[str, str, str]] = []

    def cancel(self, watch_id='', request_id='', reason=''):
        self.cancelled.append((watch_id, request_id, reason))

        class W:
            pass
        w = W()
        w.watch_id = watch_id or 'w-of-request'
        return [w] if (watch_id == 'w-1' or request_id == 'r-1') else []


def desk(tmp_path, insecure=False):
    operators = tmp_path / 'operators.yaml'
    auth.add_operator(operators, 'alice', 'pilot')
    auth.add_operator(operators, 'pam', 'payload_operator')
    verifier = auth.ConfirmationVerifier.from_file(
        operators, {'arm_motors': 'critical', 'spotlight': 'payload'}.get)
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


def test_cancelling_names_who_did_it_and_what_was_not_found(tmp_path):
    d, _, _, _ = desk(tmp_path)
    ok = d.cancel_watch(CancelCall(watch_id='w-1', operator_name='alice'))
    assert (ok.success, ok.affected) == (True, ['w-1'])
    assert d.watches.cancelled[-1] == ('w-1', '', 'cancelled by alice')
    missing = d.cancel_watch(CancelCall(watch_id='w-2'))
    assert not missing.success and 'no armed watch for w-2' in missing.message
    assert 'cancelled by (unnamed)' in d.watches.cancelled[-1][2]
    assert 'nothing given' in d.cancel_watch(CancelCall()).message
