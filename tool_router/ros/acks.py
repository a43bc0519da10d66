"""Answers that wait for the executor's acknowledgement (pure; the router node feeds it).

With ``execute=true`` the router publishes a selection and answers only when the executor's
``SelectionAck`` with the same request id arrives (the executor has the selection on disk: its
``received`` event was fsync'd) or when ``executor_ack_timeout_s`` has passed.

The service callback :meth:`AckBook.park` s a :class:`Waiter` after routing (its serving slot is
given back first: waiting costs no routing capacity) and blocks on it; the ack subscription
:meth:`AckBook.deliver` s the outcome. Only rclpy's public API is used: a callback that returns
its response is answered by rclpy, so the waiting callback holds one executor thread and no
more (the node sizes its executor for ``capacity`` waits beside its serving threads); beyond
``capacity`` waiting answers :meth:`AckBook.park` says no and the caller answers "busy"
without publishing.

Selections are volatile, so one published before the router's writer has matched an
executor's reader is lost: the executor never sees it and the answer times out, although
an executor is running. A third participant seeing the executor on the graph proves
nothing about the router's own match (DDS discovery is per pair of participants; a
busy machine delays it by seconds). So a selection waits in the :class:`Outbox` until
the selection writer has a matched subscription, within the answer's deadline; one never
published is answered :func:`no_subscriber_reason`, and is dropped at the deadline, so an
executor that matches later never runs a selection whose answer said "not executed".

A selection that went out but has no ack yet is sent again every :data:`RESEND_S` until its
ack arrives or its deadline passes (:meth:`Outbox.track`; a selection of the request topic,
which nobody waits for, until a genuine ack of it arrives: :meth:`Outbox.acknowledged`). The
executor's reader is best effort: an executor whose reader is flooded (a keyless process
publishing forged selections) drops samples, the genuine one among them, and each copy is a
fresh chance. (With a reliable reader a dropped genuine sample stalled the router's writer:
its later copies waited behind the retransmission, and a re-sent request was served 63 times in
100 against 99 with the best-effort reader; docs/SECURITY.md, "Floods".) The executor answers a
copy it already has with the first copy's ack and runs it once (tool_router/executor/intake.py,
rule 7).

Anyone on the DDS domain can publish on the ack topic, so an ack counts only when it carries
the executor's signature (HMAC-SHA256 by ``executor_key_file``'s key over
:func:`~tool_router.common.signing.ack_payload`) **and** answers the selection this router
published: the ack names that selection's router signature (:meth:`AckBook.expect`). The
executor's genuine refusal of a forged selection that copied a request id names the forged
selection's signature, so it decides nothing either. A genuine ack taken once is never taken
again (its signature is remembered): a request sent twice is routed to the same tools and so
to the same router signature, and the executor's "accepted" for the first must not answer the
second, which it refuses as a replay. :meth:`AckBook.receive` ignores and counts everything
else (``acks_unsigned``, ``acks_bad_signature``, ``acks_other_selection``, ``acks_replayed``);
a forged ack never changes what the caller is told.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from tool_router.common.signing import ack_signature_ok


def no_ack_reason(timeout_s: float) -> str:
    """The reason given when no ack came in time."""
    return (f'no executor acknowledged the selection within {timeout_s:g} s '
            '(is the executor running?)')


def no_subscriber_reason(timeout_s: float) -> str:
    """The reason given when no executor's reader matched the selection writer in time."""
    return (f'no executor subscribed to the selection topic within {timeout_s:g} s: nothing '
            'was sent (is the executor running, in this namespace and ROS domain?)')


ACKS_REMEMBERED = 4096  # signatures of delivered acks kept to refuse their replay


@dataclass
class Waiter:
    """One answer waiting for its ack: :meth:`wait` returns ``(executed, reason)``."""

    request_id: str
    timeout_s: float
    deadline: float
    clock: Callable[[], float] = time.monotonic
    outcome: tuple[bool, str] | None = None
    selection_signature: str | None = None  # the router signature of the selection it answers
    _done: threading.Event = field(default_factory=threading.Event)

    def wait(self, unsent: Callable[[str], bool] = lambda request_id: False) -> tuple[bool, str]:
        """Block until the ack or the deadline; ``unsent(id)``: its selection never went out."""
        self._done.wait(max(0.0, self.deadline - self.clock()))
        if self.outcome is not None:
            return self.outcome
        reason = no_subscriber_reason if unsent(self.request_id) else no_ack_reason
        return False, reason(self.timeout_s)

    def waited_s(self) -> float:
        """Seconds since the answer was parked."""
        return max(0.0, self.clock() - (self.deadline - self.timeout_s))


class AckBook:
    """Thread-safe book of answers waiting for their ack (at most ``capacity`` at once)."""

    def __init__(self, capacity: int = 64, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = capacity
        self._clock = clock
        self._waiting: dict[str, Waiter] = {}
        self._lock = threading.Lock()
        self.timeouts = 0
        self.key: bytes | None = None  # the executor's ack key (the node sets it at configure)
        self.ignored = {'acks_unsigned': 0, 'acks_bad_signature': 0, 'acks_other_selection': 0,
                        'acks_replayed': 0}
        self._taken: dict[str, None] = {}  # signatures of the acks delivered (the latest ones)

    def __len__(self) -> int:
        with self._lock:
            return len(self._waiting)

    def park(self, request_id: str, timeout_s: float) -> Waiter | None:
        """A waiter for the ack of ``request_id``; None when the book is full (answer "busy").

        Call before publishing the selection, so an ack cannot arrive unexpected; call
        :meth:`release` once the answer is decided.
        """
        waiter = Waiter(request_id, timeout_s, self._clock() + timeout_s, self._clock)
        with self._lock:
            if len(self._waiting) >= self.capacity or request_id in self._waiting:
                return None
            self._waiting[request_id] = waiter
        return waiter

    def expect(self, request_id: str, selection_signature: str) -> None:
        """The selection of ``request_id`` goes out with this router signature (call first)."""
        with self._lock:
            waiter = self._waiting.get(request_id)
            if waiter is not None:
                waiter.selection_signature = selection_signature

    def receive(self, msg: Any) -> str:
        """A SelectionAck message arrived: deliver it if it is the executor's, for our selection.

        Returns '' when delivered or nobody waits for it (late, another router's), else why it
        was ignored (counted in :meth:`counters`).
        """
        request_id = str(msg.request_id)
        with self._lock:
            waiter = self._waiting.get(request_id)
            expected = waiter.selection_signature if waiter is not None else None
        if waiter is None:
            return ''
        why = ''
        if not msg.signature:
            why, counter = 'unsigned', 'acks_unsigned'
        elif self.key is None or not ack_signature_ok(self.key, msg):
            why, counter = 'bad signature', 'acks_bad_signature'
        elif expected is None or msg.selection_signature != expected:
            why, counter = 'answers another selection', 'acks_other_selection'
        with self._lock:
            if not why and msg.signature in self._taken:
                why, counter = 'replayed', 'acks_replayed'
            if why:
                self.ignored[counter] += 1
                return why
            self._taken[msg.signature] = None
            if len(self._taken) > ACKS_REMEMBERED:
                del self._taken[next(iter(self._taken))]
        self.deliver(request_id, bool(msg.accepted), str(msg.reason))
        return ''

    def genuine(self, msg: Any) -> bool:
        """Whether an ack carries the executor's valid signature (whoever waits for it)."""
        return bool(msg.signature) and self.key is not None and ack_signature_ok(self.key, msg)

    def deliver(self, request_id: str, accepted: bool, reason: str) -> bool:
        """A verified ack arrived; acks nobody waits for (late, another router's) are ignored."""
        with self._lock:
            waiter = self._waiting.get(request_id)
            if waiter is None or waiter.outcome is not None:
                return False
            waiter.outcome = (accepted, reason)
        waiter._done.set()
        return True

    def release(self, waiter: Waiter) -> None:
        """Forget a decided (or never published) answer; count it when it timed out."""
        with self._lock:
            if self._waiting.get(waiter.request_id) is waiter:
                del self._waiting[waiter.request_id]
                if waiter.outcome is None:
                    self.timeouts += 1

    def counters(self) -> dict[str, int]:
        """Answers waiting for an ack, and acks timed out so far (for /diagnostics)."""
        with self._lock:
            return {'ack_waiting': len(self._waiting), 'ack_timeouts': self.timeouts,
                    **self.ignored}


GONE_KEPT = 1000  # dropped request ids remembered for their answers' reason
# a sent selection with no ack yet is sent again this often: under a flat-out flood about half
# the copies reach the executor (benchmarks/flood.py), so 20 copies in the default 2 s window
RESEND_S = 0.1


class Outbox:
    """Selections waiting for a matched reader before they are published (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._items: dict[str, tuple[Any, float]] = {}  # request id -> (message, deadline)
        self._sent: dict[str, tuple[Any, float, float]] = {}  # -> (message, deadline, next)
        self._resend: set[str] = set()  # waiting ones to track once sent
        self._gone: dict[str, None] = {}  # dropped unsent (the latest GONE_KEPT, in order)
        self._lock = threading.Lock()
        self.dropped = 0
        self.resent = 0  # copies sent again for want of an ack

    def __len__(self) -> int:
        """Selections waiting to be sent or sent again."""
        with self._lock:
            return len(self._items) + len(self._sent)

    def unsent(self, request_id: str) -> bool:
        """Whether ``request_id``'s selection is still waiting or was dropped unsent."""
        with self._lock:
            return request_id in self._items or request_id in self._gone

    def forget(self, request_id: str) -> None:
        """The answer of ``request_id`` is decided: no need to remember it was unsent."""
        with self._lock:
            self._gone.pop(request_id, None)
            self._items.pop(request_id, None)
            self._sent.pop(request_id, None)
            self._resend.discard(request_id)

    def acknowledged(self, request_id: str, selection_signature: str,
                     genuine: Callable[[], bool]) -> bool:
        """An ack answers this selection: stop sending it again (True if it was being sent).

        For selections nobody waits for (the request topic's). The ack must name the router
        signature of the copy being sent and be ``genuine()`` (the executor's signature,
        checked only for a selection being sent, so a flood of acks costs no HMAC each).
        """
        with self._lock:
            sent = self._sent.get(request_id)
            if sent is None or getattr(sent[0], 'router_signature', None) != selection_signature:
                return False
        if not genuine():
            return False
        with self._lock:
            self._sent.pop(request_id, None)
        return True

    def track(self, request_id: str, message: Any, timeout_s: float) -> None:
        """``message`` went out: send it again every RESEND_S until forgotten or ``timeout_s``."""
        now = self._clock()
        with self._lock:
            self._sent[request_id] = (message, now + timeout_s, now + RESEND_S)

    def put(self, request_id: str, message: Any, timeout_s: float, resend: bool = False) -> None:
        """Hold ``message`` until a reader matches, for at most ``timeout_s``.

        With ``resend`` it is then sent again until forgotten, as :meth:`track` does.
        """
        with self._lock:
            self._items[request_id] = (message, self._clock() + timeout_s)
            if resend:
                self._resend.add(request_id)

    def take(self, matched: bool) -> tuple[list[Any], list[str]]:
        """(messages to publish now, request ids dropped at their deadline).

        With ``matched`` every message still in time goes out; the ones past their deadline
        are dropped either way (their answer says "not executed").
        """
        now = self._clock()
        with self._lock:
            late = [rid for rid, (_, deadline) in self._items.items() if now >= deadline]
            for rid in late:
                del self._items[rid]
                self._resend.discard(rid)
            for rid in late:
                self._gone[rid] = None
            for rid in list(self._gone)[:max(0, len(self._gone) - GONE_KEPT)]:
                del self._gone[rid]
            ready: list[Any] = []
            if matched:
                ready = [message for message, _ in self._items.values()]
                for rid, (message, deadline) in self._items.items():
                    if rid in self._resend:
                        self._sent[rid] = (message, deadline, now + RESEND_S)
                self._resend.difference_update(self._items)
                self._items.clear()
                for rid, (message, deadline, due) in list(self._sent.items()):
                    if now >= deadline:
                        del self._sent[rid]
                    elif now >= due:
                        ready.append(message)
                        self._sent[rid] = (message, deadline, now + RESEND_S)
                        self.resent += 1
            self.dropped += len(late)
        return ready, late
