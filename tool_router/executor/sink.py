"""The executor's one way to disk: every record written, then handed to its listeners (pure).

:class:`TraceSink` owns the trace writer (and the optional MCAP bag) behind one lock. Write-ahead
events raise when they are not on disk (the caller must not act); final records, watch records
and security records are reported when they cannot be written and then still handed to the
listeners (the node publishes them on its topics), so an operator watching the topics learns
what happened even when the disk did not take it.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from pydantic import BaseModel

from tool_router.common.errors import ToolRouterError
from tool_router.executor.traces import TraceEvent, TraceRecord, TraceWriter, WatchRecord


class TraceSink:
    """Writes records through one :class:`TraceWriter`; ``on_record`` / ``on_watch`` listen."""

    def __init__(self, writer: TraceWriter, bag: Any = None,
                 on_record: Callable[[TraceRecord], None] | None = None,
                 on_watch: Callable[[WatchRecord], None] | None = None,
                 log: Callable[[str, str], None] = lambda level, message: None) -> None:
        self.writer: TraceWriter | None = writer
        self.bag = bag
        self.on_record = on_record
        self.on_watch = on_watch
        self.log = log
        self._lock = threading.Lock()

    @property
    def path(self) -> Any:
        """The trace file being written (None once closed)."""
        return self.writer.path if self.writer is not None else None

    def event(self, event: TraceEvent) -> None:
        """Append one write-ahead event (fsync'd); raises when it is not on disk."""
        with self._lock:
            if self.writer is None:
                raise ToolRouterError('trace writer is closed')
            try:
                self.writer.write(event)
            except (OSError, ToolRouterError) as exc:
                self.log('error', f'cannot write {event.event} of {event.request_id}: {exc}')
                raise

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
                self.writer.close()
                self.writer = None
            if self.bag is not None:
                self.bag.close()
                self.bag = None

    def _write(self, record: BaseModel, what: str, bag: bool = False) -> None:
        with self._lock:
            try:
                if self.writer is None:
                    raise ToolRouterError('trace writer is closed')
                self.writer.write(record)
                if bag and self.bag is not None:
                    self.bag.write(record)
            except (OSError, ToolRouterError) as exc:
                self.log('error', f'cannot write {what}: {exc}')
