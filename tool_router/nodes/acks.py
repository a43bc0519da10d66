"""Waiting for the executor's acknowledgement of a selection (pure; the router node feeds it).

The router publishes a selection and waits, for at most a deadline, for the
executor's ``SelectionAck`` with the same request id. An ack means the executor
has the selection on disk (its ``received`` trace event was fsync'd) and will
process it or trace it ``expired``; no ack means no live executor took it.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class _Slot:
    event: threading.Event = field(default_factory=threading.Event)
    accepted: bool = False
    reason: str = ''


class AckWaiter:
    """Thread-safe book of expected acks.

    :meth:`expect` before publishing, :meth:`wait` after, :meth:`deliver` from the
    ack subscription.
    """

    def __init__(self) -> None:
        self._slots: dict[str, _Slot] = {}
        self._lock = threading.Lock()

    def expect(self, request_id: str) -> None:
        """Register interest in the ack of ``request_id`` (before the selection goes out)."""
        with self._lock:
            self._slots[request_id] = _Slot()

    def deliver(self, request_id: str, accepted: bool, reason: str) -> None:
        """An ack arrived; acks nobody waits for are ignored."""
        with self._lock:
            slot = self._slots.get(request_id)
        if slot is not None:
            slot.accepted, slot.reason = accepted, reason
            slot.event.set()

    def wait(self, request_id: str, timeout_s: float) -> tuple[bool, str]:
        """(accepted, reason) of the ack, or (False, why) when none came within ``timeout_s``."""
        with self._lock:
            slot = self._slots.get(request_id)
        if slot is None:
            return False, 'not expected'
        got = slot.event.wait(timeout_s)
        with self._lock:
            self._slots.pop(request_id, None)
        if not got:
            return False, (f'no executor acknowledged the selection within {timeout_s:g} s '
                           '(is the executor running?)')
        return slot.accepted, slot.reason
