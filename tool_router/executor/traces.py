"""Typed execution traces: write-ahead events and one final record per request, as JSONL.

Schema ``SCHEMA_VERSION`` (2.2: every record carries the ``namespace`` of the executor that
wrote it, e.g. ``/uav1``, ``/`` for the root namespace; 2.1: each per-tool entry is the router's
:class:`~tool_router.common.choice.ToolChoice`, with its evidence, extended by what the executor
did; 2.1 and 2.0 files read the same, their records with namespace ``''``: not recorded).
Two kinds of line share a file:

* :class:`TraceEvent` (``"record": "event"``): one state change of a request, appended
  (and ``fsync``'d) *before* the executor acts on it: ``received``, ``permission_decided``,
  ``awaiting_confirmation``, ``confirmation``, ``dispatching``, ``dispatched``;
* :class:`TraceRecord` (``"record": "request"``, or no ``record`` key in 1.0 files): the
  finished request with everything decided and done.

:func:`fold` joins them by request id into one view per request; a request with events
but no final record was left unfinished (a crash). :class:`TraceWriter` writes a whole
line with a single ``write`` and ``fsync``, cuts a torn line back off after a write
error and rotates by size, so a file never holds a partial line followed by a good
one. :func:`read_traces` skips and counts bad lines when asked to. Version 1.0 files
(final records only) are still read.
"""
from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Iterable, Iterator, Literal, Union

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.choice import ToolChoice
from tool_router.common.errors import ToolRouterError, first_problem
from tool_router.executor.chain import TraceChain, strip_link
from tool_router.common.redact import redact
from tool_router.common.stats import percentiles

SCHEMA_VERSION: Final = '2.2'
READABLE_VERSIONS = ('1.0', '2.0', '2.1', '2.2')
NAMESPACE_DOC: Final = ("The executor's ROS namespace ('/uav1'; '/' = root); '' = not "
                        'recorded (files before schema 2.2).')

# Per-tool outcomes (ExecutionTrace.outcomes uses the same words). 'armed': a watch waits for
# the tool's condition; 'not_armed': the condition could not be read; 'skipped_conditional'
# only appears in files written before condition watches existed; 'expired' / 'cancelled':
# the selection was never processed (too old, or the executor shut down).
OUTCOMES = ('dispatched', 'failed', 'denied', 'dry_run', 'shadow', 'armed', 'not_armed',
            'skipped_conditional', 'skipped_after_failure', 'expired', 'cancelled')
WATCH_EVENTS = ('armed', 'fired', 'expired', 'cancelled')
# Request states of the write-ahead events, in the order they happen. Watch states
# (armed / fired / expired / cancelled) are WatchRecord lines.
EVENTS = ('received', 'permission_decided', 'awaiting_confirmation', 'confirmation',
          'dispatching', 'dispatched')
# Stop reasons of requests that never reached the pipeline.
NOT_PROCESSED = ('expired', 'cancelled_at_shutdown', 'refused')


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
    permissions_decided: float | None = Field(
        None, description='Every tool has a permission decision (None: never processed).')
    confirmations_resolved: float | None = Field(
        None, description='Every confirmation is approved, denied or timed out.')
    dispatch_done: float | None = Field(
        None, description='Every tool is dispatched, skipped or failed; for a request never '
                          'processed, when it was expired, cancelled or refused.')


class ConfirmationOutcome(BaseModel):
    """How an operator confirmation ended."""

    model_config = ConfigDict(extra='forbid')

    outcome: Literal['approved', 'denied', 'timeout', 'not_requested', 'interrupted',
                     'over_limit', 'refused'] = Field(
        description='not_requested: shadow mode or a conditional tool; interrupted: the '
                    'executor shut down during the wait; over_limit: too many confirmations '
                    'of this tool were already pending (refused: the same, in files written '
                    'before the name was changed).')
    operator_name: str = Field('', description='Who decided (from /executor/confirm).')
    waited_s: float = Field(0.0, ge=0, description='Seconds between announcement and decision.')


class ToolTrace(ToolChoice):
    """Everything the executor decided and did for one selected tool: its choice, extended."""

    model_config = ConfigDict(extra='forbid')

    risk: str = Field('', description="Risk class from the catalog; '' for unknown names.")
    decision: Literal['allow', 'deny', 'confirm', 'undecided'] = Field(
        description='undecided: the request was never processed (expired, cancelled).')
    reason: str = Field(description='Why the permission decision was taken.')
    confirmation: ConfirmationOutcome | None = None
    outcome: Literal['dispatched', 'failed', 'denied', 'dry_run', 'shadow', 'armed', 'not_armed',
                     'skipped_conditional', 'skipped_after_failure', 'expired', 'cancelled']
    watch_id: str = Field('', description="The condition watch armed for this tool ('' = none).")
    endpoint: str = Field('', description='Binding the tool maps to (kind:name).')
    message: str = Field('', description='Answer of the endpoint, or why it was not called.')
    latency_ms: float | None = Field(None, description='Dispatch call latency.')
    finished: float | None = Field(None, description='Epoch time the endpoint answered.')
    failure_mode: str = Field('', description="'' or router_fault, permission_denied, "
                                              'rate_limited, confirmation_denied, '
                                              'confirmation_timeout, endpoint_unreachable, '
                                              'call_timeout, call_failed, internal_error, '
                                              'condition_unreadable, watch_limit, '
                                              'confirmation_interrupted, '
                                              'confirmation_over_limit, trace_unwritable; '
                                              'from a ToolCall endpoint or MAVLink: '
                                              'vehicle_refused, missing_argument, '
                                              'outside_limits, bad_argument, ....')


class TraceRecord(BaseModel):
    """One executor trace record (one request)."""

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['1.0', '2.0', '2.1', '2.2'] = SCHEMA_VERSION
    record: Literal['request'] = 'request'
    namespace: str = Field('', description=NAMESPACE_DOC)
    request_id: str
    mode: Literal['execute', 'dry_run', 'shadow']
    request_text: str
    redacted: bool = Field(False, description='request_text had redaction rules applied.')
    requested_by: str = Field('', description='Operator whose requester signature verified '
                                              "('' = unsigned; docs/SECURITY.md).")
    policy: str = ''
    fallback_used: bool = False
    candidates: list[Candidate] = Field(default_factory=list)
    validation_drops: list[str] = Field(default_factory=list,
                                        description='Names the router validator removed.')
    stamps: Stamps
    tools: list[ToolTrace] = Field(default_factory=list)
    failure_mode: str = Field('', description='First failure mode among the tools.')
    stop_reason: str = Field(description='completed, completed_with_errors, '
                                         'aborted_after:<tool>, shadow_mode, no_tools; never '
                                         'processed: expired, cancelled_at_shutdown, refused.')
    notes: list[str] = Field(default_factory=list)


class WatchRecord(BaseModel):
    """One event in the life of a condition watch (armed, fired, expired, cancelled).

    Written to the same JSONL files as :class:`TraceRecord` (told apart by ``record``);
    the action a fired watch runs gets its own :class:`TraceRecord` with the same request id.
    """

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['1.0', '2.0', '2.1', '2.2'] = SCHEMA_VERSION
    record: Literal['watch'] = 'watch'
    namespace: str = Field('', description=NAMESPACE_DOC)
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


class TraceEvent(BaseModel):
    """One write-ahead state change of a request, on disk before the executor acts on it."""

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['2.0', '2.1', '2.2'] = SCHEMA_VERSION
    record: Literal['event'] = 'event'
    namespace: str = Field('', description=NAMESPACE_DOC)
    event: Literal['received', 'permission_decided', 'awaiting_confirmation', 'confirmation',
                   'dispatching', 'dispatched']
    request_id: str
    stamp: float = Field(description='When it happened, seconds since the epoch.')
    tool: str = Field('', description="The tool concerned; '' = the whole request.")
    tools: list[str] = Field(default_factory=list, description='received: the selected tools; '
                                                               'permission_decided: same order '
                                                               'as decisions.')
    decisions: list[str] = Field(default_factory=list,
                                 description='permission_decided: allow/deny/confirm per tool.')
    mode: str = Field('', description='received: execute, dry_run or shadow.')
    request_text: str = Field('', description='received: the (redacted) request text.')
    outcome: str = Field('', description='confirmation: approved/denied/...; dispatched: '
                                         'dispatched/failed.')
    detail: str = Field('', description='Operator name, endpoint answer, binding.')


AnyRecord = Union[TraceRecord, TraceEvent, WatchRecord]


def _security_model() -> type[BaseModel]:
    from tool_router.executor.auth import SecurityRecord
    return SecurityRecord


def parse_record_line(line: str) -> AnyRecord:
    """One JSONL line (chain link stripped) as its record kind; ValueError if invalid."""
    return parse_line(line)
# "record" value -> model; a line without "record" is a version 1.0 request record.
RECORD_KINDS: dict[str, type[BaseModel]] = {'request': TraceRecord, 'event': TraceEvent,
                                             'watch': WatchRecord}


# -- redaction -----------------------------------------------------------------
class Redactor:
    """Request text for the traces, through the one redactor (:mod:`tool_router.common.redact`).

    Coordinates become ``<coordinates>``, listed names ``<name>``, other numbers
    ``<number>``; each kind can be switched off; disabled, the text is unchanged.
    """

    def __init__(self, enabled: bool = False, digits: bool = True, coordinates: bool = True,
                 names: Iterable[str] = ()) -> None:
        self.enabled = enabled
        self.digits = digits
        self.coordinates = coordinates
        self.names = tuple(n.strip() for n in names if n.strip())

    def __call__(self, text: str) -> str:
        """The text with the configured placeholders, or unchanged when disabled."""
        if not self.enabled:
            return text
        return redact(text, self.names, coordinates=self.coordinates, numbers=self.digits).text


# -- writing -------------------------------------------------------------------
class TraceWriter:
    """Append-only JSONL writer with fsync per record and size-based rotation.

    Files are named ``<prefix>-<start time>-<pid>-<n>.jsonl``; a new file is
    started (never renamed) when the current one would exceed ``max_bytes``. A record
    with a ``namespace`` field still empty is written with ``namespace`` (the executor's).
    """

    def __init__(self, directory: str | Path, max_bytes: int = 10_000_000,
                 prefix: str = 'executor', fsync: bool = True,
                 chain_key: bytes | None = None, namespace: str = '') -> None:
        self.directory = Path(directory)
        self.namespace = namespace
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
        self._torn = False
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
        self._torn = False
        self.path = path
        return path

    def write(self, record: BaseModel) -> Path:
        """Append one record as one line (write + fsync); return the file it went to.

        On a write error (full disk, ``RLIMIT_FSIZE``) the partial line is cut off again,
        or, when that fails too, the next record goes to a new file: a torn line is never
        followed by a good one. The error is raised as :class:`TraceError`.
        """
        if self.namespace and 'namespace' in type(record).model_fields \
                and not getattr(record, 'namespace'):
            record = record.model_copy(update={'namespace': self.namespace})
        line = (record.model_dump_json() + '\n').encode('utf-8')
        with self._lock:
            if self._fd is None:
                raise TraceError('trace writer is closed')
            if self._torn or (self._size and self._size + len(line) > self.max_bytes):
                self._open_next()
            rewind = self.chain.last if self.chain is not None else ''
            if self.chain is not None:
                line = self.chain.seal(line)
            view = memoryview(line)
            try:
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
                if self.fsync:
                    os.fsync(self._fd)
            except OSError as exc:
                self._cut_back()
                if self.chain is not None:  # the sealed line never made it: link past it
                    self.chain.rewind(rewind)
                raise TraceError(f'cannot write trace record: {exc.strerror or exc}',
                                 where=str(self.path)) from None
            self._size += len(line)
            return self.path

    def _cut_back(self) -> None:
        """Truncate a torn line after a failed write; else start a new file next time."""
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, self._size)
        except OSError:
            self._torn = True

    def close(self) -> None:
        """Close the current file; later writes raise TraceError."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


# -- reading -------------------------------------------------------------------
def parse_line(line: str) -> AnyRecord:
    """One JSONL line as the record kind its ``record`` key names (none: a 1.0 request record).

    A hash-chain link (``prev_hash``, :mod:`.chain`) is stripped first. Raises
    ``ValueError`` (pydantic's ValidationError is one) for anything else.
    """
    data = json.loads(strip_link(line))
    if not isinstance(data, dict):
        raise ValueError('a record must be a JSON object')
    kind = data.get('record', 'request')
    model = (_security_model() if kind == 'security' else
             RECORD_KINDS.get(kind) if isinstance(kind, str) else None)
    if model is None:
        raise ValueError(f'unknown record kind {kind!r}')
    if data.get('schema_version') not in READABLE_VERSIONS:
        raise ValueError(f"unknown schema_version {data.get('schema_version')!r}")
    return model.model_validate(data)  # type: ignore[return-value]


def _why(exc: ValueError) -> str:
    if isinstance(exc, pydantic.ValidationError):
        problem = first_problem(exc)
        return f"invalid record: {problem.field or '(record)'}: {problem.msg}"
    if isinstance(exc, json.JSONDecodeError):
        return f'not JSON: {exc.msg}'
    return f'invalid record: {exc}'


def read_traces(path: str | Path, bad: list[str] | None = None) -> Iterator[AnyRecord]:
    """Yield the records of one JSONL trace file.

    With ``bad`` (a list), a line that is torn, not JSON or not a valid record is
    skipped and described there (``file:line: why``); without it, the first bad line
    raises :class:`TraceError` naming it.
    """
    path = Path(path)
    try:
        handle = path.open('rb')
    except OSError as exc:
        raise TraceError(f'cannot read trace file: {exc.strerror}', where=str(path)) from None
    with handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            why = ''
            if not raw.endswith(b'\n'):
                why = 'truncated record (no end of line)'
            else:
                try:
                    yield parse_line(raw.decode('utf-8'))
                    continue
                except UnicodeDecodeError:
                    why = 'not UTF-8'
                except ValueError as exc:
                    why = _why(exc)
            if bad is None:
                raise TraceError(why, where=f'{path}:{number}')
            bad.append(f'{path}:{number}: {why}')


def trace_files(paths: Iterable[str | Path], recursive: bool = False) -> list[Path]:
    """Expand directories to the ``*.jsonl`` files inside them (``recursive``: and below)."""
    out: list[Path] = []
    for item in paths:
        p = Path(item)
        out += sorted(p.rglob('*.jsonl') if recursive else p.glob('*.jsonl')) if p.is_dir() \
            else [p]
    return out


def record_namespace(record: Any) -> str:
    """The namespace a record was written in ('' = not recorded: before schema 2.2)."""
    return str(getattr(record, 'namespace', '') or '')


def by_namespace(records: Iterable[Any]) -> dict[str, list[Any]]:
    """Records grouped by :func:`record_namespace`, namespaces in name order."""
    groups: dict[str, list[Any]] = {}
    for rec in records:
        groups.setdefault(record_namespace(rec), []).append(rec)
    return dict(sorted(groups.items()))


def owned_by(recorded: str, namespace: str | None) -> bool:
    """Whether the executor in ``namespace`` may act on a record written in ``recorded``.

    ``None`` = any (no namespace filter). A record of another namespace never; one without a
    namespace (written before schema 2.2) by any executor, as before.
    """
    return namespace is None or not recorded or recorded == namespace


@dataclass
class RequestView:
    """Everything the trace files hold about one request id, in file order."""

    request_id: str
    events: list[TraceEvent] = field(default_factory=list)
    records: list[TraceRecord] = field(default_factory=list)
    watches: list[WatchRecord] = field(default_factory=list)
    ends_with_record: bool = False  # the latest event or record line is a final record

    @property
    def armed_watches(self) -> list[str]:
        """Watch ids armed and never fired, expired or cancelled (the executor died)."""
        ended = {w.watch_id for w in self.watches if w.event != 'armed'}
        return [w.watch_id for w in self.watches if w.event == 'armed' and w.watch_id not in ended]

    @property
    def finished(self) -> bool:
        """A final record follows the latest event.

        The request (or the action a fired watch ran for it) came to an end or was
        expired / cancelled.
        """
        return self.ends_with_record

    @property
    def last_state(self) -> str:
        """The latest state: the stop reason when finished, else the last event (and tool)."""
        if self.finished:
            return f'finished: {self.records[-1].stop_reason}'
        if not self.events:
            return 'unknown'
        last = self.events[-1]
        return f'{last.event} {last.tool}'.strip()


def fold(records: Iterable[Any]) -> dict[str, RequestView]:
    """Join events, final records and watch records by request id."""
    views: dict[str, RequestView] = {}
    for rec in records:
        if isinstance(rec, TraceEvent):
            view = views.setdefault(rec.request_id, RequestView(rec.request_id))
            view.events.append(rec)
            view.ends_with_record = False
        elif isinstance(rec, TraceRecord):
            view = views.setdefault(rec.request_id, RequestView(rec.request_id))
            view.records.append(rec)
            view.ends_with_record = True
        elif isinstance(rec, WatchRecord):
            views.setdefault(rec.request_id, RequestView(rec.request_id)).watches.append(rec)
    return views


def summarize(records: Iterable[Any]) -> dict[str, Any]:
    """Counts per tool and outcome, denials, failures, confirmations, latency percentiles.

    Also the requests left unfinished (events but no final record: the executor
    died) and the watches left armed.
    """
    records = list(records)
    views = fold(records)
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
        if not isinstance(rec, TraceRecord):
            continue
        n += 1
        modes[rec.mode] = modes.get(rec.mode, 0) + 1
        reason = rec.stop_reason.split(':')[0]
        stop_reasons[reason] = stop_reasons.get(reason, 0) + 1
        s = rec.stamps
        if s.permissions_decided is not None and s.confirmations_resolved is not None \
                and s.dispatch_done is not None:
            stages['permissions'].append((s.permissions_decided - s.received) * 1000)
            stages['confirmations'].append((s.confirmations_resolved - s.permissions_decided)
                                           * 1000)
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
    unfinished = [{'request_id': v.request_id, 'last_state': v.last_state,
                   'tools': v.events[0].tools if v.events else [],
                   'since': v.events[0].stamp if v.events else None}
                  for v in views.values() if not v.finished]
    return {
        'records': n, 'requests': len(views),
        'events': sum(isinstance(r, TraceEvent) for r in records),
        'modes': modes, 'stop_reasons': stop_reasons,
        'per_tool': dict(sorted(per_tool.items())), 'denials': denials, 'failures': failures,
        'confirmations': confirmations,
        'stage_latency_ms': {k: percentiles(v) for k, v in stages.items()},
        'dispatch_call_latency_ms': percentiles(dispatch_ms),
        'watch_events': watch_events,
        'security_events': security,
        'unfinished': unfinished,
        'watches_left_armed': [{'request_id': v.request_id, 'watch_ids': v.armed_watches}
                               for v in views.values() if v.armed_watches],
    }


def format_summary(summary: dict[str, Any]) -> str:
    """Human-readable text of :func:`summarize`'s result."""
    lines = [f"requests: {summary.get('requests', summary['records'])}  "
             f"records: {summary['records']}  events: {summary.get('events', 0)}  "
             f"modes: {summary['modes']}  stop reasons: {summary['stop_reasons']}"]
    skipped = summary.get('bad_lines') or []
    if skipped:
        lines.append(f'skipped {len(skipped)} bad line(s), first: {skipped[0]}')
    lines += ['', 'per tool:']
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
    unfinished = summary.get('unfinished') or []
    lines.append(f'unfinished requests: {len(unfinished) or "none"}'
                 + (' (no final record: the executor stopped before they ended)'
                    if unfinished else ''))
    for item in unfinished:
        tools = ', '.join(item['tools'])
        lines.append(f"  {item['request_id']:24s} {item['last_state']:32s} {tools}")
    armed = summary.get('watches_left_armed') or []
    if armed:
        lines.append(f'watches left armed (never fired, expired or cancelled): {len(armed)}')
        for item in armed:
            lines.append(f"  {item['request_id']:24s} {', '.join(item['watch_ids'])}")
    return '\n'.join(lines)


OUTCOME_FIELDS = ('tool', 'decision', 'outcome', 'failure_mode', 'endpoint', 'message',
                  'watch_id', 'condition')


def trace_message_fields(record: TraceRecord) -> dict[str, Any]:
    """The plain fields of an ExecutionTrace message; ``tools``: one ToolOutcome's fields each.

    The node (and the MCAP bag) build the messages from these, so both carry the same fields.
    """
    return {'schema_version': record.schema_version, 'request_id': record.request_id,
            'stop_reason': record.stop_reason,
            'tools': [{k: getattr(t, k) for k in OUTCOME_FIELDS} for t in record.tools],
            'record_json': record.model_dump_json()}


def restart_cancellations(files: Iterable[str | Path], now: float, reason: str,
                          namespace: str | None = None) -> list[WatchRecord]:
    """The ``cancelled`` records of the watches a previous executor armed and never ended.

    With ``namespace``, only the watches of that namespace (:func:`owned_by`): an executor
    restarting never cancels the watch of another vehicle writing to the same directory.
    """
    return [armed.model_copy(update={'event': 'cancelled', 'stamp': now, 'reason': reason})
            for armed in open_watches(w for w in watch_records_in(files)
                                      if owned_by(w.namespace, namespace))]


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
