"""AckBook and Outbox: answers waiting for an executor ack, selections waiting for a reader."""
from __future__ import annotations

import threading

from tool_router.ros.acks import AckBook, Outbox


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_ack_wakes_its_waiter_with_the_executors_outcome():
    acks = AckBook(capacity=4)
    waiter = acks.park('a', 30.0)
    got: list = []
    t = threading.Thread(target=lambda: got.append(waiter.wait()))
    t.start()
    assert acks.deliver('a', True, 'on disk')
    t.join(30)
    assert got == [(True, 'on disk')]
    assert not acks.deliver('a', True, 'again')  # a duplicate ack changes nothing
    acks.release(waiter)
    assert acks.counters() == {'ack_waiting': 0, 'ack_timeouts': 0, 'acks_unsigned': 0,
                               'acks_bad_signature': 0, 'acks_other_selection': 0,
                               'acks_replayed': 0}
    assert not acks.deliver('unknown', True, '')  # an ack nobody waits for is ignored


def test_a_refusal_is_the_answer_too():
    acks = AckBook()
    waiter = acks.park('a', 30.0)
    acks.deliver('a', False, 'queue full')
    assert waiter.wait() == (False, 'queue full')


def test_no_ack_in_time_is_not_executed_and_counted():
    clock = Clock()
    acks = AckBook(clock=clock)
    waiter = acks.park('a', 2.0)
    clock.now += 2.5  # the deadline has passed: wait returns at once
    executed, reason = waiter.wait()
    assert not executed and 'no executor acknowledged the selection within 2 s' in reason
    acks.release(waiter)
    assert acks.counters()['ack_waiting'] == 0 and acks.counters()['ack_timeouts'] == 1
    assert not acks.deliver('a', True, 'late ack')  # released: the late ack is ignored


def test_an_answer_whose_selection_never_went_out_says_so():
    clock = Clock()
    acks = AckBook(clock=clock)
    waiter = acks.park('a', 2.0)
    clock.now += 3.0
    executed, reason = waiter.wait(unsent=lambda rid: rid == 'a')
    assert not executed and 'no executor subscribed' in reason and 'nothing was sent' in reason


def test_a_full_book_says_busy_and_one_waiter_per_request():
    acks = AckBook(capacity=2)
    assert acks.park('a', 1.0) and acks.park('b', 1.0)
    assert acks.park('c', 1.0) is None  # full: the caller answers busy
    assert acks.park('a', 1.0) is None  # one answer per request id
    assert len(acks) == 2


def test_outbox_holds_a_selection_until_a_reader_matches():
    clock = Clock()
    box = Outbox(clock)
    box.put('a', 'msg-a', 2.0)
    box.put('b', 'msg-b', 2.0)
    assert box.take(matched=False) == ([], []) and len(box) == 2 and box.unsent('a')
    clock.now += 1.0
    ready, dropped = box.take(matched=True)  # the executor's reader matched: both go out
    assert sorted(ready) == ['msg-a', 'msg-b'] and dropped == [] and len(box) == 0
    assert not box.unsent('a')


def test_outbox_drops_a_selection_at_its_deadline_even_if_a_reader_matches_then():
    clock = Clock()
    box = Outbox(clock)
    box.put('a', 'msg-a', 2.0)
    clock.now += 2.0
    # its answer says "not executed": a reader matching now must never get it
    assert box.take(matched=True) == ([], ['a'])
    assert len(box) == 0 and box.dropped == 1 and box.unsent('a')
    box.forget('a')
    assert not box.unsent('a')


def test_a_sent_selection_goes_again_until_its_ack_or_its_deadline():
    from tool_router.ros.acks import RESEND_S
    clock = Clock()
    box = Outbox(clock)
    box.track('a', 'msg-a', 1.0)  # published at once (a reader had matched)
    box.put('b', 'msg-b', 1.0, resend=True)  # waits for a reader, then goes again too
    box.put('c', 'msg-c', 1.0)  # the topic path: sent once, never again
    assert box.take(matched=True) == (['msg-b', 'msg-c'], [])
    assert box.take(matched=True) == ([], [])  # not due yet
    clock.now += RESEND_S
    assert sorted(box.take(matched=True)[0]) == ['msg-a', 'msg-b']
    box.forget('a')  # its ack arrived
    clock.now += RESEND_S
    assert box.take(matched=True)[0] == ['msg-b'] and box.resent == 3
    clock.now += 1.0  # past b's deadline: never again
    assert box.take(matched=True) == ([], []) and len(box) == 0


def test_a_genuine_ack_of_the_copy_being_sent_stops_its_resends():
    from types import SimpleNamespace

    from tool_router.ros.acks import RESEND_S
    clock = Clock()
    box = Outbox(clock)
    msg = SimpleNamespace(router_signature='aa' * 32)
    box.track('a', msg, 2.0)  # a request-topic selection: nobody waits for its ack
    checked = []

    def genuine(ok):
        return lambda: checked.append(ok) or ok

    # an ack naming another selection stops nothing, and costs no signature check
    assert not box.acknowledged('a', 'bb' * 32, genuine(True)) and checked == []
    assert not box.acknowledged('z', 'aa' * 32, genuine(True)) and checked == []
    # a forged ack (bad executor signature) stops nothing
    assert not box.acknowledged('a', 'aa' * 32, genuine(False)) and checked == [False]
    clock.now += RESEND_S
    assert box.take(matched=True)[0] == [msg]
    assert box.acknowledged('a', 'aa' * 32, genuine(True))
    clock.now += RESEND_S
    assert box.take(matched=True) == ([], []) and len(box) == 0
