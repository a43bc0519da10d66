"""Pending operator confirmations: registered by the executor, resolved by /executor/confirm.

Only :meth:`ConfirmationBook.resolve` (the confirm service) can approve a tool;
nothing in a request's text is ever consulted. A wait that outlives its
timeout is a denial (``timeout``); a wait ended by shutdown is ``interrupted``;
beyond ``max_pending_per_tool`` waiting requests of one tool, a new one is
``over_limit`` at once (an operator is never flooded with one tool; a distinct name
from the ``confirmation_refused`` security event, which is a refused /executor/confirm call).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from tool_router.executor.traces import ConfirmationOutcome


@dataclass
class Pending:
    """One tool of one request waiting for an operator."""

    request_id: str
    tool: str
    opened: float  # on the book's clock (monotonic): what waits are measured against
    risk: str = ''
    timeout_s: float = 0.0
    opened_at: float = field(default_factory=time.time)  # wall clock, for operators' displays
    event: threading.Event = field(default_factory=threading.Event)
    approve: bool = False
    operator_name: str = ''
    closed_reason: str = ''


class ConfirmationBook:
    """Thread-safe registry of pending confirmations."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 max_pending_per_tool: int = 0, on_change: Callable[[], None] | None = None
                 ) -> None:
        self._clock = clock
        self.max_pending_per_tool = max_pending_per_tool  # 0 = unbounded
        self._on_change = on_change
        self._pending: dict[tuple[str, str], Pending] = {}
        self._lock = threading.Lock()
        self._closed = False

    def open(self, request_id: str, tool: str, risk: str = '', timeout_s: float = 0.0) -> Pending:
        """Register a tool as waiting; the caller then announces it and calls :meth:`wait`."""
        entry = Pending(request_id, tool, self._clock(), risk=risk, timeout_s=timeout_s)
        with self._lock:
            same_tool = sum(1 for key in self._pending if key[1] == tool)
            if self._closed:
                entry.closed_reason = 'interrupted'
                entry.event.set()
            elif self.max_pending_per_tool and same_tool >= self.max_pending_per_tool:
                entry.closed_reason = 'over_limit'
                entry.event.set()
            else:
                self._pending[(request_id, tool)] = entry
        self._changed()
        return entry

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def resolve(self, request_id: str, tool: str, approve: bool,
                operator_name: str) -> list[str]:
        """Approve or deny one pending tool (or all of the request when ``tool`` is '')."""
        with self._lock:
            keys = [k for k in self._pending
                    if k[0] == request_id and (not tool or k[1] == tool)]
            entries = [self._pending.pop(k) for k in keys]
        for entry in entries:
            entry.approve = approve
            entry.operator_name = operator_name
            entry.event.set()
        if entries:
            self._changed()
        return [e.tool for e in entries]

    def wait(self, entry: Pending, deadline: float) -> ConfirmationOutcome:
        """Block until the tool is decided or the monotonic ``deadline`` passes (= denied)."""
        decided = entry.event.wait(max(0.0, deadline - self._clock()))
        with self._lock:
            removed = self._pending.pop((entry.request_id, entry.tool), None)
        if removed is not None:
            self._changed()
        decided = decided or entry.event.is_set()  # resolved in the race window
        waited = round(max(0.0, self._clock() - entry.opened), 3)
        if entry.closed_reason in ('interrupted', 'over_limit'):
            return ConfirmationOutcome(outcome=entry.closed_reason, waited_s=waited)
        if not decided:
            return ConfirmationOutcome(outcome='timeout', waited_s=waited)
        return ConfirmationOutcome(outcome='approved' if entry.approve else 'denied',
                                   operator_name=entry.operator_name, waited_s=waited)

    def pending(self) -> list[tuple[str, str]]:
        """(request id, tool) of every tool still waiting."""
        with self._lock:
            return list(self._pending)

    def now(self) -> float:
        """The book's clock (what :attr:`Pending.opened` is measured on)."""
        return self._clock()

    def pending_entries(self) -> list[Pending]:
        """Every entry still waiting, oldest first."""
        with self._lock:
            return sorted(self._pending.values(), key=lambda e: e.opened)

    def close(self) -> None:
        """End every wait as ``interrupted`` (shutdown) and refuse new entries."""
        with self._lock:
            self._closed = True
            entries = list(self._pending.values())
            self._pending.clear()
        for entry in entries:
            entry.closed_reason = 'interrupted'
            entry.event.set()
