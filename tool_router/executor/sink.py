"""The executor's one way to disk: every record written, then handed to its listeners (pure).

:class:`TraceSink` owns the trace writer (and the optional MCAP bag) behind one lock.

Fail safe on a full disk (docs/SECURITY.md, "Full disk"): a record that cannot be written is
kept in memory, in order, and written as soon as the disk takes it again (every later write, and
:meth:`TraceSink.flush`, which the node calls on a timer, tries the backlog first, oldest first,
so the hash chain and the order of the lines stay those of the events). Write-ahead events
raise when they are not on disk (the caller must not act) unless the caller asks to ``keep``
them: the executor does so for the safety actions only (land, return_to_home, hold_position,
emergency_stop), which run with their record in memory. Final records, watch records and
security records are always kept and then handed to the listeners (the node publishes them on
its topics), so an operator watching the topics learns what happened even when the disk did not
take it. The backlog is bounded (``max_backlog``); beyond it security records are dropped first
and counted (a flood must not evict a vehicle's story), then the oldest other records.
:meth:`TraceSink.health` says whether everything is on disk (the node's ``/diagnostics``).
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel

from tool_router.common.errors import ToolRouterError
from tool_router.executor.auth import SecurityRecord
from tool_router.executor.traces import TraceEvent, TraceRecord, TraceWriter, WatchRecord


@dataclass(frozen=True)
class SinkHealth:
    """Whether every record is on disk; what waits in memory and why."""

    on_disk: bool
    backlog: int  # records kept in memory, not yet written
    dropped: int  # records lost because the backlog was full (security records first)
    error: str  # the last write error ('' when the last write succeeded)

    def status(self) -> tuple[str, str]:
        """The diagnostics level ('OK' / 'ERROR') and one line for an operator."""
        if self.on_disk:
            return 'OK', 'trace writer: every record on disk'
        lost = f', {self.dropped} dropped' if self.dropped else ''
        return 'ERROR', (f'trace writer: {self.backlog} record(s) in memory, not on disk{lost} '
                         f'({self.error}); only safety actions run')


class TraceSink:
    """Writes records through one :class:`TraceWriter`; ``on_record`` / ``on_watch`` listen."""

    def __init__(self, writer: TraceWriter, bag: Any = None,
                 on_record: Callable[[TraceRecord], None] | None = None,
                 on_watch: Callable[[WatchRecord], None] | None = None,
                 log: Callable[[str, str], None] = lambda level, message: None,
                 max_backlog: int = 10_000) -> None:
        self.writer: TraceWriter | None = writer
        self.bag = bag
        self.on_record = on_record
        self.on_watch = on_watch
        self.log = log
        self.max_backlog = max_backlog
        self._backlog: deque[tuple[BaseModel, bool]] = deque()  # (record, to the bag too)
        self._dropped = 0
        self._error = ''
        self._lock = threading.Lock()

    @property
    def path(self) -> Any:
        """The trace file being written (None once closed)."""
        return self.writer.path if self.writer is not None else None

    def event(self, event: TraceEvent, keep: bool = False) -> bool:
        """Append one write-ahead event (fsync'd): True when on disk.

        When it cannot be written it raises, unless ``keep``: then it is kept in memory (written
        when the disk takes it) and the answer is False (the caller acts on a record in memory).
        """
        with self._lock:
            if self.writer is None:
                raise ToolRouterError('trace writer is closed')
            try:
                self._flush_locked()
                if self._backlog:
                    raise ToolRouterError(f'trace not writable: {self._error}')
                self.writer.write(event)
                self._error = ''
                return True
            except (OSError, ToolRouterError) as exc:
                self._error = self._error or str(exc)
                if not keep:
                    self.log('error', f'cannot write {event.event} of {event.request_id}: {exc}')
                    raise
                self._keep(event, bag=False)
                self.log('warning', f'{event.event} of {event.request_id} kept in memory, not on '
                                    f'disk ({exc}); a safety action runs on it')
                return False

    def flush(self) -> SinkHealth:
        """Write what waits in memory, oldest first, as far as the disk takes it."""
        with self._lock:
            self._flush_locked()
            return self._health_locked()

    def health(self) -> SinkHealth:
        """Whether every record is on disk (without trying to write)."""
        with self._lock:
            return self._health_locked()

    def record(self, record: TraceRecord) -> None:
        """Append a final request record (and to the bag); then tell ``on_record``."""
        self._write(record, f'trace {record.request_id}', bag=True)
        if self.on_record is not None:
            self.on_record(record)

    def watch(self, record: WatchRecord) -> None:
        """Append a watch record; then tell ``on_watch``."""
        self._write(record, f'watch record {record.watch_id}')
        if self.on_watch is not None:
            self.on_watch(record)

    def security(self, record: BaseModel) -> None:
        """Append a security record."""
        self._write(record, 'security record')

    def close(self) -> None:
        """Close the writer and the bag; later events raise, later records are reported."""
        with self._lock:
            if self.writer is not None:
                self._flush_locked()
                if self._backlog:
                    self.log('error', f'{len(self._backlog)} record(s) never reached the disk '
                                      f'({self._error}); they were published on the topics')
                self.writer.close()
                self.writer = None
            if self.bag is not None:
                self.bag.close()
                self.bag = None

    def _write(self, record: BaseModel, what: str, bag: bool = False) -> None:
        with self._lock:
            if self.writer is None:
                self.log('error', f'cannot write {what}: trace writer is closed')
                return
            try:
                self._flush_locked()
                if self._backlog:
                    raise ToolRouterError(self._error or 'trace not writable')
                self.writer.write(record)
                self._error = ''
                if bag and self.bag is not None:
                    self.bag.write(record)
            except (OSError, ToolRouterError) as exc:
                first = not self._backlog
                self._error = self._error or str(exc)
                self._keep(record, bag)
                if first:
                    self.log('error', f'cannot write {what}: {exc}; records are kept in memory '
                                      'and written when the disk takes them')

    def _keep(self, record: BaseModel, bag: bool) -> None:
        """Keep ``record`` for later (caller holds the lock); bounded, security records first."""
        if len(self._backlog) >= self.max_backlog:
            if isinstance(record, SecurityRecord):
                self._dropped += 1
                return
            victim = next((i for i, (r, _) in enumerate(self._backlog)
                           if isinstance(r, SecurityRecord)), 0)
            del self._backlog[victim]
            self._dropped += 1
        self._backlog.append((record, bag))

    def _flush_locked(self) -> None:
        """Write the backlog, oldest first, until a write fails (caller holds the lock)."""
        if not self._backlog or self.writer is None:
            return
        written = 0
        while self._backlog:
            record, bag = self._backlog[0]
            try:
                self.writer.write(record)
            except (OSError, ToolRouterError) as exc:
                self._error = str(exc)
                break
            self._backlog.popleft()
            written += 1
            if bag and self.bag is not None:
                try:
                    self.bag.write(record)
                except (OSError, ToolRouterError) as exc:  # the JSONL line is the record
                    self.log('warning', f'bag write failed: {exc}')
        if written:
            left = len(self._backlog)
            self.log('info' if not left else 'warning',
                     f'{written} record(s) kept in memory written to disk'
                     + (f', {left} still waiting' if left else ''))
        if not self._backlog:
            self._error = ''

    def _health_locked(self) -> SinkHealth:
        return SinkHealth(on_disk=not self._backlog and not self._error,
                          backlog=len(self._backlog), dropped=self._dropped, error=self._error)
