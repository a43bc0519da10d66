"""Answers held until the executor acknowledges a selection (pure; the router node feeds it).

With ``execute=true`` the router publishes a selection and answers only when the
executor's ``SelectionAck`` with the same request id arrives (the executor has
the selection on disk: its ``received`` trace event was fsync'd) or when
``executor_ack_timeout_s`` has passed (no live executor took it).

The wait does not hold a serving thread: the service callback *parks* its
filled-in response here and returns; the node's ``send_response`` hook hands the
request header over (:meth:`AckBook.attach`) instead of sending, and whichever
comes second, the header or the outcome (ack or timeout), sends the answer.
Up to ``capacity`` answers wait at once; beyond that :meth:`AckBook.park` says no
and the caller answers "busy" without publishing.

Selections are volatile, so one published before the router's writer has matched an
executor's reader is lost: the executor never sees it and the answer times out, although
an executor is running. A third participant seeing the executor on the graph proves
nothing about the router's own match (DDS discovery is per pair of participants; a
busy machine delays it by seconds). So a selection waits in the :class:`Outbox` until
the selection writer has a matched subscription, within the answer's deadline; one never
published is answered :func:`no_subscriber_reason`, and is dropped at the deadline, so an
executor that matches later never runs a selection whose answer said "not executed".
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Held:
    """One answer waiting for its ack: the response, and the header once it is known."""

    request_id: str
    response: Any
    timeout_s: float
    deadline: float
    header: Any = None  # the request's rmw header once the deferred callback has it
    outcome: tuple[bool, str] | None = None  # (executed, reason) once decided
    clock: Callable[[], float] = time.monotonic

    def waited_s(self) -> float:
        """Seconds since the answer was parked."""
        return max(0.0, self.clock() - (self.deadline - self.timeout_s))


def no_ack_reason(timeout_s: float) -> str:
    """The reason given when no ack came in time."""
    return (f'no executor acknowledged the selection within {timeout_s:g} s '
            '(is the executor running?)')


def no_subscriber_reason(timeout_s: float) -> str:
    """The reason given when no executor's reader matched the selection writer in time."""
    return (f'no executor subscribed to the selection topic within {timeout_s:g} s: nothing '
            'was sent (is the executor running, in this namespace and ROS domain?)')


class Outbox:
    """Selections waiting for a matched reader before they are published (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._items: dict[str, tuple[Any, float]] = {}  # request id -> (message, deadline)
        self._lock = threading.Lock()
        self.dropped = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __contains__(self, request_id: object) -> bool:
        with self._lock:
            return request_id in self._items

    def put(self, request_id: str, message: Any, timeout_s: float) -> None:
        """Hold ``message`` until a reader matches, for at most ``timeout_s``."""
        with self._lock:
            self._items[request_id] = (message, self._clock() + timeout_s)

    def take(self, matched: bool) -> tuple[list[Any], list[str]]:
        """(messages to publish now, request ids dropped at their deadline).

        With ``matched`` every message still in time goes out; the ones past their deadline
        are dropped either way (their answer has said "not executed").
        """
        now = self._clock()
        with self._lock:
            late = [rid for rid, (_, deadline) in self._items.items() if now >= deadline]
            for rid in late:
                del self._items[rid]
            ready: list[Any] = []
            if matched:
                ready = [message for message, _ in self._items.values()]
                self._items.clear()
            self.dropped += len(late)
        return ready, late


class AckBook:
    """Thread-safe book of answers parked until their ack (or timeout).

    ``send(response, header)`` really sends an answer; ``finish(held)`` fills in
    the outcome (``held.outcome``) just before it is sent. Both are called
    outside the book's lock.
    """

    def __init__(
        self,
        send: Callable[[Any, Any], None],
        finish: Callable[[Held], None],
        capacity: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send, self._finish = send, finish
        self.capacity = capacity
        self._clock = clock
        self._by_id: dict[str, Held] = {}
        self._by_response: dict[int, Held] = {}
        self._lock = threading.Lock()
        self.timeouts = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_id)

    def park(self, request_id: str, response: Any, timeout_s: float) -> bool:
        """Hold ``response`` until the ack of ``request_id``; False when the book is full.

        Call before publishing the selection, so an ack cannot arrive unexpected.
        """
        held = Held(request_id, response, timeout_s, self._clock() + timeout_s, clock=self._clock)
        with self._lock:
            if len(self._by_id) >= self.capacity or request_id in self._by_id:
                return False
            self._by_id[request_id] = held
            self._by_response[id(response)] = held
        return True

    def attach(self, response: Any, header: Any) -> bool:
        """The service is about to send ``response``: True = held here (sent later).

        False = send it now (not parked, or its outcome is already known and
        filled in).
        """
        with self._lock:
            held = self._by_response.get(id(response))
            if held is None or held.response is not response:
                return False
            if held.outcome is None:
                held.header = header
                return True
            self._forget(held)
        self._finish(held)
        return False

    def cancel(self, request_id: str) -> None:
        """Forget a parked answer whose selection never went out (its response is sent as is)."""
        with self._lock:
            held = self._by_id.get(request_id)
            if held is not None:
                self._forget(held)

    def deliver(self, request_id: str, accepted: bool, reason: str) -> None:
        """An ack arrived; acks nobody waits for (late, or for another router) are ignored."""
        self._decide(request_id, (accepted, reason))

    def expire(self, unsent: Callable[[str], bool] = lambda request_id: False) -> int:
        """Decide every held answer past its deadline as not executed; return how many.

        ``unsent(request_id)``: its selection was never published (no matched reader).
        """
        now = self._clock()
        with self._lock:
            late = [h for h in self._by_id.values() if h.outcome is None and now >= h.deadline]
        decided = 0
        for held in late:
            reason = (no_subscriber_reason if unsent(held.request_id) else no_ack_reason)
            if self._decide(held.request_id, (False, reason(held.timeout_s))):
                decided += 1
        with self._lock:
            self.timeouts += decided
        return decided

    def _decide(self, request_id: str, outcome: tuple[bool, str]) -> bool:
        with self._lock:
            held = self._by_id.get(request_id)
            if held is None or held.outcome is not None:
                return False
            held.outcome = outcome
            if held.header is None:
                return True  # attach() sends it when the header comes
            self._forget(held)
        self._finish(held)
        self._send(held.response, held.header)
        return True

    def _forget(self, held: Held) -> None:
        self._by_id.pop(held.request_id, None)
        self._by_response.pop(id(held.response), None)

    def counters(self) -> dict[str, int]:
        """Answers waiting for an ack, and acks timed out so far (for /diagnostics)."""
        with self._lock:
            return {'ack_waiting': len(self._by_id), 'ack_timeouts': self.timeouts}
