"""AckBook: answers parked for an executor ack are sent once, by the ack or the timeout."""
from __future__ import annotations

from types import SimpleNamespace

from tool_router.ros.acks import AckBook, Held, Outbox


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def book(capacity: int = 10) -> tuple[AckBook, list, Clock]:
    sent: list = []
    clock = Clock()

    def finish(held: Held) -> None:
        held.response.executed, held.response.reason = held.outcome

    return AckBook(lambda r, h: sent.append((r, h)), finish, capacity, clock), sent, clock


def answer() -> SimpleNamespace:
    return SimpleNamespace(executed=None, reason='')


def test_ack_after_header_sends_from_the_ack():
    acks, sent, _ = book()
    r = answer()
    assert acks.park('a', r, 2.0)
    assert acks.attach(r, 'hdr')  # held: the serving thread sends nothing
    assert sent == []
    acks.deliver('a', True, 'on disk')
    assert sent == [(r, 'hdr')] and r.executed is True and r.reason == 'on disk'
    assert len(acks) == 0
    acks.deliver('a', True, 'again')  # a duplicate ack sends nothing more
    assert len(sent) == 1


def test_ack_before_header_is_sent_by_the_serving_thread():
    acks, sent, _ = book()
    r = answer()
    acks.park('a', r, 2.0)
    acks.deliver('a', False, 'queue full')
    assert sent == []  # no header yet: nothing can be sent
    assert not acks.attach(r, 'hdr')  # the caller sends it now, outcome filled in
    assert r.executed is False and r.reason == 'queue full' and len(acks) == 0


def test_timeout_decides_not_executed_once():
    acks, sent, clock = book()
    r = answer()
    acks.park('a', r, 2.0)
    acks.attach(r, 'hdr')
    clock.now += 1.9
    assert acks.expire() == 0 and sent == []
    clock.now += 0.2
    assert acks.expire() == 1
    assert sent == [(r, 'hdr')] and r.executed is False and 'within 2 s' in r.reason
    acks.deliver('a', True, 'late ack')  # the late ack is ignored
    assert len(sent) == 1 and r.executed is False
    assert acks.counters() == {'ack_waiting': 0, 'ack_timeouts': 1}


def test_timeout_before_header_then_attach():
    acks, sent, clock = book()
    r = answer()
    acks.park('a', r, 1.0)
    clock.now += 5
    acks.expire()
    assert not acks.attach(r, 'hdr') and r.executed is False and sent == []


def test_unparked_answers_go_out_and_full_book_refuses():
    acks, sent, _ = book(capacity=2)
    other = answer()
    assert not acks.attach(other, 'hdr')  # never parked: send now
    assert acks.park('a', answer(), 1.0) and acks.park('b', answer(), 1.0)
    assert not acks.park('c', answer(), 1.0)  # full: the caller answers busy
    assert not acks.park('a', answer(), 1.0)  # one answer per request id
    acks.deliver('unknown', True, '')  # an ack nobody waits for changes nothing
    assert len(acks) == 2 and sent == []


def test_cancelled_answer_is_sent_as_is_and_frees_its_place():
    acks, sent, _ = book(capacity=1)
    r = answer()
    acks.park('a', r, 1.0)
    acks.cancel('a')  # the selection could not be published
    assert not acks.attach(r, 'hdr') and r.executed is None  # sent by the caller, unchanged
    assert len(acks) == 0 and acks.park('b', answer(), 1.0)


def test_outbox_holds_a_selection_until_a_reader_matches():
    clock = Clock()
    box = Outbox(clock)
    box.put('a', 'msg-a', 2.0)
    box.put('b', 'msg-b', 2.0)
    assert box.take(matched=False) == ([], []) and len(box) == 2 and 'a' in box
    clock.now += 1.0
    ready, dropped = box.take(matched=True)  # the executor's reader matched: both go out
    assert sorted(ready) == ['msg-a', 'msg-b'] and dropped == [] and len(box) == 0


def test_outbox_drops_a_selection_at_its_deadline_even_if_a_reader_matches_then():
    clock = Clock()
    box = Outbox(clock)
    box.put('a', 'msg-a', 2.0)
    clock.now += 2.0
    # its answer has said "not executed": a reader matching now must never get it
    assert box.take(matched=True) == ([], ['a'])
    assert len(box) == 0 and box.dropped == 1


def test_an_answer_whose_selection_never_went_out_says_so():
    acks, sent, clock = book()
    r, s = answer(), answer()
    acks.park('a', r, 2.0)
    acks.park('b', s, 2.0)
    acks.attach(r, 'hdr-a')
    acks.attach(s, 'hdr-b')
    clock.now += 2.5
    assert acks.expire(unsent=lambda rid: rid == 'a') == 2
    assert 'no executor subscribed' in r.reason and 'nothing was sent' in r.reason
    assert 'no executor acknowledged' in s.reason
