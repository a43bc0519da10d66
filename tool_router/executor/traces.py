"""Typed execution traces: one record per request, written append-only as JSONL.

Each record is a :class:`TraceRecord` (schema ``SCHEMA_VERSION``), one JSON
object per line. :class:`TraceWriter` writes a whole line with a single
``write`` and then ``fsync``s it, and rotates to a new file by size, so a
killed process leaves only complete records behind. :func:`summarize` turns
trace files into counts and latency percentiles (``tool-router trace summary``).
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Final, Iterable, Iterator, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tool_router.errors import ToolRouterError
from tool_router.executor.chain import TraceChain, strip_link

SCHEMA_VERSION: Final = '1.0'

# Per-tool outcomes (ExecutionTrace.outcomes uses the same words). 'armed': a watch waits for
# the tool's condition; 'not_armed': the condition could not be read; 'skipped_conditional'
# only appears in files written before condition watches existed.
OUTCOMES = ('dispatched', 'failed', 'denied', 'dry_run', 'shadow', 'armed', 'not_armed',
            'skipped_conditional', 'skipped_after_failure')
WATCH_EVENTS = ('armed', 'fired', 'expired', 'cancelled')


class TraceError(ToolRouterError):
    """A trace file is unreadable or holds an invalid record."""


class Candidate(BaseModel):
    """One tool the router considered, with its score."""

    model_config = ConfigDict(extra='forbid')

    tool: str
    score: float


class Stamps(BaseModel):
    """Wall-clock times (seconds since the epoch) of the stages of one request."""

    model_config = ConfigDict(extra='forbid')

    routed: float | None = Field(None, description='Stamp of the router message (sender clock).')
    received: float = Field(description='The executor received the selection.')
    permissions_decided: float = Field(description='Every tool has a permission decision.')
    confirmations_resolved: float = Field(description='Every confirmation is approved, denied or '
                                                      'timed out.')
    dispatch_done: float = Field(description='Every tool is dispatched, skipped or failed.')


class ConfirmationOutcome(BaseModel):
    """How an operator confirmation ended."""

    model_config = ConfigDict(extra='forbid')

    outcome: Literal['approved', 'denied', 'timeout', 'not_requested'] = Field(
        description='not_requested: shadow mode or a conditional tool.')
    operator_name: str = Field('', description='Who decided (from /executor/confirm).')
    waited_s: float = Field(0.0, ge=0, description='Seconds between announcement and decision.')


class ToolTrace(BaseModel):
    """Everything the executor decided and did for one selected tool."""

    model_config = ConfigDict(extra='forbid')

    tool: str
    risk: str = Field('', description="Risk class from the catalog; '' for unknown names.")
    score: float = 0.0
    clause_index: int = -1
    condition: str = Field('', description="Gating condition text; '' = unconditional.")
    decision: Literal['allow', 'deny', 'confirm']
    reason: str = Field(description='Why the permission decision was taken.')
    confirmation: ConfirmationOutcome | None = None
    outcome: Literal['dispatched', 'failed', 'denied', 'dry_run', 'shadow', 'armed', 'not_armed',
                     'skipped_conditional', 'skipped_after_failure']
    watch_id: str = Field('', description="The condition watch armed for this tool ('' = none).")
    endpoint: str = Field('', description='Binding the tool maps to (kind:name).')
    message: str = Field('', description='Answer of the endpoint, or why it was not called.')
    latency_ms: float | None = Field(None, description='Dispatch call latency.')
    finished: float | None = Field(None, description='Epoch time the endpoint answered.')
    failure_mode: str = Field('', description="'' or router_fault, permission_denied, "
                                              'rate_limited, confirmation_denied, '
                                              'confirmation_timeout, endpoint_unreachable, '
                                              'call_timeout, call_failed, internal_error, '
                                              'condition_unreadable, watch_limit.')


class TraceRecord(BaseModel):
    """One executor trace record (one request)."""

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['1.0'] = SCHEMA_VERSION
    request_id: str
    mode: Literal['execute', 'dry_run', 'shadow']
    request_text: str
    redacted: bool = Field(False, description='request_text had redaction rules applied.')
    policy: str = ''
    fallback_used: bool = False
    candidates: list[Candidate] = Field(default_factory=list)
    validation_drops: list[str] = Field(default_factory=list,
                                        description='Names the router validator removed.')
    stamps: Stamps
    tools: list[ToolTrace] = Field(default_factory=list)
    failure_mode: str = Field('', description='First failure mode among the tools.')
    stop_reason: str = Field(description='completed, completed_with_errors, '
                                         'aborted_after:<tool>, shadow_mode, no_tools.')
    notes: list[str] = Field(default_factory=list)


class WatchRecord(BaseModel):
    """One event in the life of a condition watch (armed, fired, expired, cancelled).

    Written to the same JSONL files as :class:`TraceRecord` (told apart by ``record``);
    the action a fired watch runs gets its own :class:`TraceRecord` with the same request id.
    """

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['1.0'] = SCHEMA_VERSION
    record: Literal['watch'] = 'watch'
    event: Literal['armed', 'fired', 'expired', 'cancelled']
    stamp: float = Field(description='When it happened, seconds since the epoch.')
    watch_id: str
    request_id: str
    tool: str = Field(description='The gated tool.')
    condition: str = Field(description='The condition text as the router gave it.')
    predicate: str = Field(description='What is watched, e.g. battery_status.battery_pct < 25 %.')
    sensor: str = Field(description="Sensor tool sampled, or 'clock'.")
    expires: float = Field(description='Epoch time the watch expires unless it fires first.')
    samples: int = Field(0, ge=0, description='Sensor readings taken so far.')
    value: float | bool | str | None = Field(None, description='Last compared value.')
    reason: str = Field('', description='Why it fired, expired or was cancelled.')


def parse_record_line(line: str) -> 'TraceRecord | WatchRecord':
    """One JSONL line as a request, watch or security record; pydantic error if invalid."""
    line = strip_link(line)
    compact = line.replace(' ', '')
    if '"record":"watch"' in compact:
        return WatchRecord.model_validate_json(line)
    if '"record":"security"' in compact:
        from tool_router.executor.auth import SecurityRecord
        return SecurityRecord.model_validate_json(line)  # type: ignore[return-value]
    return TraceRecord.model_validate_json(line)


# -- redaction -----------------------------------------------------------------
COORDINATES = re.compile(r'[-+]?\d{1,3}\.\d+(?:\s*°)?(?:\s*[NS])?\s*[,;/ ]\s*'
                         r'[-+]?\d{1,3}\.\d+(?:\s*°)?(?:\s*[EW]\b)?')
DIGITS = re.compile(r'\d+(?:[.,]\d+)*')


class Redactor:
    """Replaces coordinates, numbers and listed names in request text by placeholders."""

    def __init__(self, enabled: bool = False, digits: bool = True, coordinates: bool = True,
                 names: Iterable[str] = ()) -> None:
        self.enabled = enabled
        self.digits = digits
        self.coordinates = coordinates
        words = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
        self._names = (re.compile(r'\b(?:' + '|'.join(map(re.escape, words)) + r')\b', re.I)
                       if words else None)

    def __call__(self, text: str) -> str:
        """The text with the configured placeholders, or unchanged when disabled."""
        if not self.enabled:
            return text
        if self.coordinates:
            text = COORDINATES.sub('<COORD>', text)
        if self._names is not None:
            text = self._names.sub('<NAME>', text)
        if self.digits:
            text = DIGITS.sub('<NUM>', text)
        return text


# -- writing -------------------------------------------------------------------
class TraceWriter:
    """Append-only JSONL writer with fsync per record and size-based rotation.

    Files are named ``<prefix>-<start time>-<pid>-<n>.jsonl``; a new file is
    started (never renamed) when the current one would exceed ``max_bytes``.
    """

    def __init__(self, directory: str | Path, max_bytes: int = 10_000_000,
                 prefix: str = 'executor', fsync: bool = True,
                 chain_key: bytes | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max(1024, int(max_bytes))
        self.prefix = prefix
        self.fsync = fsync
        self._stem = f"{prefix}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
        # hash chain over the lines, anchored in a signed manifest (tool_router/executor/chain.py)
        self.chain = TraceChain(self.directory, self._stem, chain_key) if chain_key else None
        self._seq = 0
        self._fd: int | None = None
        self._size = 0
        self._lock = threading.Lock()
        self.path = self._open_next()

    def _open_next(self) -> Path:
        if self._fd is not None:
            os.close(self._fd)
        self._seq += 1
        path = self.directory / f'{self._stem}-{self._seq:03d}.jsonl'
        if self.chain is not None:  # manifest first: a file never exists without its anchor
            self.chain.start_file(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = os.fstat(self._fd).st_size
        self.path = path
        return path

    def write(self, record: 'TraceRecord | WatchRecord') -> Path:
        """Append one record as one line; return the file it went to."""
        line = (record.model_dump_json() + '\n').encode('utf-8')
        with self._lock:
            if self._fd is None:
                raise TraceError('trace writer is closed')
            if self._size and self._size + len(line) > self.max_bytes:
                self._open_next()
            if self.chain is not None:
                line = self.chain.seal(line)
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self.fsync:
                os.fsync(self._fd)
            self._size += len(line)
            return self.path

    def close(self) -> None:
        """Close the current file; later writes raise TraceError."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


# -- reading -------------------------------------------------------------------
def read_traces(path: str | Path) -> Iterator['TraceRecord | WatchRecord']:
    """Yield the records of one JSONL trace file; raise TraceError naming a bad line."""
    path = Path(path)
    try:
        handle = path.open(encoding='utf-8')
    except OSError as exc:
        raise TraceError(f'cannot read trace file: {exc.strerror}', where=str(path)) from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            if not line.endswith('\n'):
                raise TraceError('truncated record (no end of line)', where=f'{path}:{number}')
            try:
                yield parse_record_line(line)
            except pydantic.ValidationError as exc:
                first = exc.errors()[0]
                field = '.'.join(str(p) for p in first['loc']) or '(record)'
                raise TraceError(f"invalid record: {field}: {first['msg']}",
                                 where=f'{path}:{number}') from None


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories to the ``*.jsonl`` files inside them, in name order."""
    out: list[Path] = []
    for item in paths:
        p = Path(item)
        out += sorted(p.glob('*.jsonl')) if p.is_dir() else [p]
    return out


def percentiles(values: list[float], qs: Iterable[float] = (50, 90, 99)) -> dict[str, float]:
    """Nearest-rank-interpolated percentiles (same as numpy's default 'linear')."""
    if not values:
        return {}
    data = sorted(values)
    out = {}
    for q in qs:
        pos = (len(data) - 1) * q / 100.0
        lo = int(pos)
        hi = min(lo + 1, len(data) - 1)
        out[f'p{q:g}'] = data[lo] + (data[hi] - data[lo]) * (pos - lo)
    return out


def summarize(records: Iterable['TraceRecord | WatchRecord']) -> dict[str, Any]:
    """Counts per tool and outcome, denials, failures, confirmations, stage latency percentiles."""
    per_tool: dict[str, dict[str, int]] = {}
    denials: dict[str, dict[str, int]] = {}
    failures: dict[str, int] = {}
    confirmations: dict[str, int] = {}
    stop_reasons: dict[str, int] = {}
    modes: dict[str, int] = {}
    stages: dict[str, list[float]] = {'permissions': [], 'confirmations': [], 'dispatch': [],
                                      'total': []}
    dispatch_ms: list[float] = []
    watch_events: dict[str, int] = {}
    security: dict[str, int] = {}
    n = 0
    for rec in records:
        if isinstance(rec, WatchRecord):
            watch_events[rec.event] = watch_events.get(rec.event, 0) + 1
            continue
        if getattr(rec, 'record', '') == 'security':
            key = str(getattr(rec, 'reason', ''))
            security[key] = security.get(key, 0) + 1
            continue
        n += 1
        modes[rec.mode] = modes.get(rec.mode, 0) + 1
        reason = rec.stop_reason.split(':')[0]
        stop_reasons[reason] = stop_reasons.get(reason, 0) + 1
        s = rec.stamps
        stages['permissions'].append((s.permissions_decided - s.received) * 1000)
        stages['confirmations'].append((s.confirmations_resolved - s.permissions_decided) * 1000)
        stages['dispatch'].append((s.dispatch_done - s.confirmations_resolved) * 1000)
        stages['total'].append((s.dispatch_done - s.received) * 1000)
        for t in rec.tools:
            counts = per_tool.setdefault(t.tool, {})
            counts[t.outcome] = counts.get(t.outcome, 0) + 1
            if t.outcome == 'denied':
                d = denials.setdefault(t.tool, {})
                d[t.reason] = d.get(t.reason, 0) + 1
            if t.failure_mode:
                failures[t.failure_mode] = failures.get(t.failure_mode, 0) + 1
            if t.confirmation is not None:
                key = t.confirmation.outcome
                confirmations[key] = confirmations.get(key, 0) + 1
            if t.outcome == 'dispatched' and t.latency_ms is not None:
                dispatch_ms.append(t.latency_ms)
    return {
        'records': n, 'modes': modes, 'stop_reasons': stop_reasons,
        'per_tool': dict(sorted(per_tool.items())), 'denials': denials, 'failures': failures,
        'confirmations': confirmations,
        'stage_latency_ms': {k: percentiles(v) for k, v in stages.items()},
        'dispatch_call_latency_ms': percentiles(dispatch_ms),
        'watch_events': watch_events,
        'security_events': security,
    }


def format_summary(summary: dict[str, Any]) -> str:
    """Human-readable text of :func:`summarize`'s result."""
    lines = [f"records: {summary['records']}  modes: {summary['modes']}  "
             f"stop reasons: {summary['stop_reasons']}", '', 'per tool:']
    for tool, counts in summary['per_tool'].items():
        detail = ', '.join(f'{k} {v}' for k, v in sorted(counts.items()))
        lines.append(f'  {tool:22s} {detail}')
    lines.append('denials:' if summary['denials'] else 'denials: none')
    for tool, reasons in summary['denials'].items():
        for reason, count in reasons.items():
            lines.append(f'  {tool:22s} {count:4d}  {reason}')
    lines.append(f"failures: {summary['failures'] or 'none'}")
    lines.append(f"confirmations: {summary['confirmations'] or 'none'}")
    lines.append('stage latency (ms):')
    for stage, pct in summary['stage_latency_ms'].items():
        text = '  '.join(f'{k} {v:.2f}' for k, v in pct.items()) or '-'
        lines.append(f'  {stage:14s} {text}')
    pct = summary['dispatch_call_latency_ms']
    text = '  '.join(f'{k} {v:.2f}' for k, v in pct.items()) or '-'
    lines.append(f'dispatch call (ms): {text}')
    lines.append(f"watches: {summary.get('watch_events') or 'none'}")
    lines.append(f"security events: {summary.get('security_events') or 'none'}")
    return '\n'.join(lines)


def trace_message_fields(record: TraceRecord) -> dict[str, Any]:
    """The plain fields of an ExecutionTrace message for a record (the node converts them)."""
    return {'schema_version': record.schema_version, 'request_id': record.request_id,
            'stop_reason': record.stop_reason, 'tools': [t.tool for t in record.tools],
            'decisions': [t.decision for t in record.tools],
            'outcomes': [t.outcome for t in record.tools],
            'record_json': record.model_dump_json()}


def record_from_json(text: str) -> TraceRecord:
    """Parse one record (e.g. ExecutionTrace.record_json)."""
    return TraceRecord.model_validate(json.loads(text))


def watch_records_in(paths: Iterable[str | Path]) -> Iterator[WatchRecord]:
    """Yield the watch records of trace files, cheaply.

    Other lines are not parsed, and a line that is torn or invalid (a killed writer)
    is skipped rather than raised.
    """
    for path in paths:
        try:
            handle = Path(path).open(encoding='utf-8', errors='replace')
        except OSError:
            continue
        with handle:
            for line in handle:
                if '"record":"watch"' not in line or not line.endswith('\n'):
                    continue
                try:
                    yield WatchRecord.model_validate_json(strip_link(line))
                except pydantic.ValidationError:
                    continue


def open_watches(records: Iterable['TraceRecord | WatchRecord']) -> list[WatchRecord]:
    """The 'armed' records of watches with no later fired/expired/cancelled record."""
    armed: dict[str, WatchRecord] = {}
    for rec in records:
        if isinstance(rec, WatchRecord):
            if rec.event == 'armed':
                armed[rec.watch_id] = rec
            else:
                armed.pop(rec.watch_id, None)
    return list(armed.values())
