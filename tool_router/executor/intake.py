"""The executor's intake: which selections are taken, in which order, and what is on disk first.

Pure logic, no ROS: the node converts a message to a :class:`Selection` and its
:class:`Signatures`, calls :meth:`Intake.accept`, publishes the :class:`Ack` it gets back, and
runs :meth:`Intake.run` on a worker for each ticket the intake submits. The rules, in order:

1. **The router's signature first** (``require_router_signature``): a selection whose tools
   the router did not sign is refused *before* the requester's signature is checked, so a
   forged selection never uses up the nonce of the signed request it copied (the router's
   genuine selection would otherwise be refused as a replay).
2. **The requester's signature**: a signature, when present, is always checked; an unsigned
   selection passes only with ``require_signed_execute: false``. Every refusal is a
   :class:`~tool_router.executor.auth.SecurityRecord` on disk before its ack.
3. **Room**: a shutting-down executor refuses (``cancelled_at_shutdown``); a full queue
   (``max_queue`` waiting) refuses anything but an emergency stop, which is never queued
   behind other requests: it gets a runner of its own (:func:`urgent`).
4. **Write-ahead**: the ``received`` event is fsync'd before the ack says accepted; one that
   cannot be written is acknowledged ``accepted=false`` and nothing runs.
5. **Staleness**: a selection that waited longer than ``max_selection_age_s`` for a worker is
   traced ``expired`` and not dispatched (:meth:`run`).
6. **Shutdown**: :meth:`shutdown` closes the door and returns a ``cancelled_at_shutdown`` record
   for every selection still queued; running ones finish.
7. **Floods** (docs/SECURITY.md, "Floods"): refusals are written one by one only up to a
   budget (:class:`RefusalBudget`: ``refusals_per_window`` per ``refusal_window_s``); past it
   they are counted, and one ``refusals_summarized`` record per window says how many, why and
   from which key ids, so a flood of forged selections costs no fsync per message; the node
   checks the router's signature on the message's raw fields (:meth:`Intake.screen`) before
   it builds a :class:`Selection`, so a forged one costs no validation either; those
   over the budget are not acknowledged either (an ack per forged message would flood the ack
   topic and every router listening to it). The same
   genuine selection received again (the router re-sends until it is acknowledged: a copy may
   be dropped in a flood) gets the first copy's ack again and runs once; "the same" is the same
   message, its routing stamp included: the same signed request routed again is a replay and
   is refused ``replayed_nonce``.

A fired watch's action enters through :meth:`fire` (rules 3-6: its request was verified when
the watch was armed).
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import ConfigError, ToolRouterError
from tool_router.common.signing import router_signature_ok
from tool_router.executor.auth import SecurityRecord, Verdict
from tool_router.executor.permissions import SAFETY_ACTIONS
from tool_router.executor.pipeline import ExecutionPipeline, Selection
from tool_router.executor.traces import TraceEvent, TraceRecord


def urgent(selection: Selection) -> bool:
    """An emergency stop is never queued behind other requests (nor refused for a full queue)."""
    return 'emergency_stop' in selection.tools


class Signatures(BaseModel):
    """The signatures a selection arrives with (router's over the tools; requester's)."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    router_signature: str = ''
    policy: str = Field('', description='The policy the requester asked for (signed).')
    max_tools: int = Field(0, description='The tool bound the requester asked for (signed).')
    key_id: str = ''
    timestamp: float = 0.0
    nonce: str = ''
    signature: str = ''

    @property
    def signed(self) -> bool:
        """The requester signed (or claims to: a key id or a signature is present)."""
        return bool(self.key_id or self.signature)


@dataclass(frozen=True)
class Ack:
    """The answer to a selection: accepted (on disk, will run or be traced) or why not."""

    request_id: str
    accepted: bool
    reason: str = ''
    publish: bool = True  # False: a refusal over the flood budget, answered by silence


class RequestVerifier(Protocol):
    """Checks requester signatures (the executor's ConfirmationVerifier)."""

    def verify_request(self, request_id: str, request_text: str, timestamp: float, nonce: str,
                       key_id: str, signature: str, tools: list[str],
                       max_age_s: float | None = None, policy: str = '',
                       max_tools: int = 0) -> Verdict:
        """The verdict on one requester signature (uses up its nonce when it verifies)."""
        ...

    def owner(self, key_id: str) -> str:
        """The operator a key id belongs to ('' if none)."""
        ...


class Journal(Protocol):
    """Where the intake's records go: write-ahead events raise when not on disk."""

    def event(self, event: TraceEvent, keep: bool = False) -> object:
        """Append one write-ahead event (fsync'd); raise when it is not on disk.

        With ``keep`` an event that cannot be written is kept in memory instead (no raise).
        """
        ...

    def record(self, record: TraceRecord) -> None:
        """Append one final request record (errors are reported, not raised)."""
        ...

    def security(self, record: SecurityRecord) -> None:
        """Append one security record (errors are reported, not raised)."""
        ...


@dataclass
class RefusalBudget:
    """How many refusals per window are written one by one; the rest are summarized."""

    per_window: int = 20
    window_s: float = 10.0
    _start: float = 0.0
    _used: int = 0
    _suppressed: Counter[str] = field(default_factory=Counter)
    _keys: Counter[str] = field(default_factory=Counter)

    def allow(self, now: float, reason: str, key_id: str) -> bool:
        """Whether this refusal gets a record of its own (else it is counted)."""
        if now - self._start >= self.window_s and not self._suppressed:
            self._start, self._used = now, 0
        if self._used < self.per_window:
            self._used += 1
            return True
        self._suppressed[reason] += 1
        self._keys[key_id[:40] or '(none)'] += 1
        return False

    def summary(self, now: float, final: bool = False) -> tuple[int, str, str] | None:
        """(count, most common reason, detail) of the refusals counted in a window now over."""
        if not self._suppressed or (now - self._start < self.window_s and not final):
            return None
        count = sum(self._suppressed.values())
        reason = self._suppressed.most_common(1)[0][0]
        by_reason = ', '.join(f'{r} {n}' for r, n in self._suppressed.most_common())
        keys = ', '.join(f'{k} {n}' for k, n in self._keys.most_common(5))
        detail = (f'{count} more refused selections in {now - self._start:.0f} s were not '
                  f'written one by one (over {self.per_window} per {self.window_s:g} s): '
                  f'{by_reason}; key ids: {keys}')
        self._suppressed.clear()
        self._keys.clear()
        self._start, self._used = now, 0
        return count, reason, detail


@dataclass
class IntakeRules:
    """The intake's limits and switches (from the executor configuration)."""

    require_router_signature: bool = True
    require_signed_execute: bool = True
    execute_max_age_s: float = 30.0
    max_queue: int = 100
    max_selection_age_s: float = 30.0


@dataclass
class _Queued:
    selection: Selection
    received: float


@dataclass
class Intake:
    """Admits selections to the pipeline by the rules of this module's docstring.

    ``submit(ticket, urgent)`` hands a ticket to a worker (the node's pool, or a thread of its
    own when ``urgent``); the worker calls :meth:`run` with it. ``router_key()`` returns the
    router's key or raises :class:`~tool_router.common.errors.ConfigError` (read when first
    needed: the router makes it at its first start). ``log(level, message)`` reports.
    """

    pipeline: ExecutionPipeline
    verifier: RequestVerifier
    journal: Journal
    submit: Callable[[int, bool], None]
    router_key: Callable[[], bytes]
    rules: IntakeRules = field(default_factory=IntakeRules)
    clock: Callable[[], float] = time.time
    log: Callable[[str, str], None] = lambda level, message: None
    _queued: dict[int, _Queued] = field(default_factory=dict)
    _tickets: itertools.count[int] = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closing: bool = False
    _key: bytes | None = None
    budget: RefusalBudget = field(default_factory=RefusalBudget)
    _answered: OrderedDict[tuple[str, str, str, str], Ack] = field(default_factory=OrderedDict)
    answered_kept: int = 1024  # genuine selections whose ack is given again to a re-sent copy

    # -- the door --------------------------------------------------------------
    def accept(self, selection: Selection, signatures: Signatures) -> Ack:
        """Check, record and queue one selection; the ack to publish."""
        received = self.clock()
        refused = self._check_router(selection, signatures)
        if refused is not None:
            return refused
        # a copy the router sent again is the same message, its stamp included; the same request
        # routed again (a replay through the router) is a new message and meets the nonce check
        copy = (selection.request_id, signatures.nonce, signatures.router_signature,
                repr(selection.routed))
        if signatures.router_signature:
            with self._lock:
                first = self._answered.get(copy)
            if first is not None:  # the router re-sent it: same answer, nothing runs again
                return first
        ack = self._admit(selection, signatures, received)
        if signatures.router_signature:
            with self._lock:
                self._answered[copy] = ack
                while len(self._answered) > self.answered_kept:
                    self._answered.popitem(last=False)
        return ack

    def _admit(self, selection: Selection, signatures: Signatures, received: float) -> Ack:
        """Rules 2-4 for a selection the router signed (or need not have)."""
        requested_by = self._check_requester(selection, signatures)
        if isinstance(requested_by, Ack):
            return requested_by
        selection = selection.model_copy(update={'requested_by': requested_by})
        with self._lock:
            closing, waiting = self._closing, len(self._queued)
        refusal = ''
        if closing:
            refusal = 'executor shutting down'
        elif waiting >= self.rules.max_queue and not urgent(selection):
            refusal = f'executor queue full ({waiting} selections waiting for a worker)'
        if refusal:
            stop = 'cancelled_at_shutdown' if closing else 'refused'
            self.journal.record(self.pipeline.unprocessed(selection, received, stop, refusal))
            self.log('warning', f'request {selection.request_id} not processed: {refusal}')
            return Ack(selection.request_id, False, refusal)
        accepted, reason = self._enqueue(selection, received)
        return Ack(selection.request_id, accepted, reason)

    def fire(self, selection: Selection) -> Ack:
        """Queue the action of a fired watch (its request was verified when it was armed)."""
        accepted, reason = self._enqueue(selection, self.clock())
        return Ack(selection.request_id, accepted, reason)

    # -- the worker --------------------------------------------------------------
    def run(self, ticket: int) -> TraceRecord | None:
        """Process one queued selection; its final record (None: taken at shutdown)."""
        with self._lock:
            item = self._queued.pop(ticket, None)
        if item is None:  # taken at shutdown: already traced cancelled_at_shutdown
            return None
        selection, received = item.selection, item.received
        age = self.clock() - received
        if age > self.rules.max_selection_age_s:
            message = (f'not dispatched: waited {age:.1f} s for a worker, more than '
                       f'max_selection_age_s {self.rules.max_selection_age_s:g} s')
            record = self.pipeline.unprocessed(selection, received, 'expired', message)
            self.journal.record(record)
            self.log('warning', f'request {selection.request_id} expired: {message}')
            return record
        try:
            record = self.pipeline.process(selection, received)
        except Exception as exc:  # noqa: BLE001 - never lose a worker thread silently
            self.log('error', f'request {selection.request_id} failed: {exc!r}')
            return None
        self.journal.record(record)
        summary = ', '.join(f'{t.tool}={t.outcome}' for t in record.tools)
        self.log('info', f'request {record.request_id}: {summary} [{record.stop_reason}]')
        return record

    def shutdown(self) -> list[TraceRecord]:
        """Close the door; a ``cancelled_at_shutdown`` record for each selection still queued."""
        with self._lock:
            self._closing = True
            queued = list(self._queued.values())
            self._queued.clear()
        self.tick(final=True)  # what a flood left counted
        records = [self.pipeline.unprocessed(
            q.selection, q.received, 'cancelled_at_shutdown',
            'executor shut down before this selection was processed') for q in queued]
        for record in records:
            self.journal.record(record)
        if records:
            self.log('info', f'{len(records)} queued selection(s) cancelled at shutdown')
        return records

    def tick(self, final: bool = False) -> None:
        """Write the summary of a flood window that is over (the node calls this each second).

        ``final``: the window is cut short (shutdown), its summary written now.
        """
        with self._lock:
            summary = self.budget.summary(self.clock(), final)
        if summary is None:
            return
        count, reason, detail = summary
        self.journal.security(SecurityRecord.model_validate(dict(
            event='refusals_summarized', stamp=self.clock(), request_id='', claimed_operator='',
            key_id='', reason=reason, detail=detail)))
        self.log('warning', f'SECURITY: {detail}')

    @property
    def waiting(self) -> int:
        """Selections queued for a worker."""
        with self._lock:
            return len(self._queued)

    # -- the rules -----------------------------------------------------------------
    def _enqueue(self, selection: Selection, received: float) -> tuple[bool, str]:
        """Write the ``received`` event (write-ahead), then queue the selection for a worker."""
        with self._lock:
            if self._closing:
                return False, 'executor shutting down'
        # on a full disk a selection with a safety action is taken on a record in memory; the
        # pipeline then runs only its safety actions (tool_router/executor/sink.py)
        safety = not SAFETY_ACTIONS.isdisjoint(selection.tools)
        try:
            self.journal.event(self.pipeline.received_event(selection, received), keep=safety)
        except (OSError, ToolRouterError) as exc:
            return False, (f'trace not writable: {exc}; on a full disk only safety actions '
                           '(land, return_to_home, hold_position, emergency_stop) run')
        with self._lock:
            ticket = next(self._tickets)
            self._queued[ticket] = _Queued(selection, received)
        self.submit(ticket, urgent(selection))
        return True, ''

    def screen(self, request_id: str, request_text: str, tools: Sequence[str],
               clause_indexes: Sequence[int], conditions: Sequence[str],
               signatures: Signatures) -> Ack | None:
        """Rule 1 on a message's raw fields, before it is read into a :class:`Selection`.

        None when the router signed these tools, clauses, conditions and request (or need not);
        else the refusal's ack. The node calls this first so that a flood of forged selections
        costs one HMAC each, not a validated model (rule 7); :meth:`accept` checks again.
        """
        if not self.rules.require_router_signature:
            return None
        if self._key is None:
            try:
                self._key = self.router_key()
            except ConfigError as exc:
                return self._refuse(request_id, tools, signatures, 'no_router_key',
                                    f'{exc}; the router creates it at configure')
        if router_signature_ok(self._key, signatures.router_signature, request_id, request_text,
                               tools, clause_indexes, conditions, signatures.nonce):
            return None
        detail = ('no router signature' if not signatures.router_signature else
                  'the router signature does not match these tools, conditions and request')
        return self._refuse(request_id, tools, signatures, 'bad_router_signature', detail)

    def _check_router(self, selection: Selection, signatures: Signatures) -> Ack | None:
        """None when the router signed these tools (or need not); else the refusal's ack."""
        choices = selection.choices
        return self.screen(selection.request_id, selection.request_text,
                           [c.tool for c in choices], [c.clause_index for c in choices],
                           [c.condition for c in choices], signatures)

    def _check_requester(self, selection: Selection, signatures: Signatures) -> str | Ack:
        """The verified requester ('' = unsigned and allowed), or the refusal's ack."""
        if not signatures.signed and not self.rules.require_signed_execute:
            return ''
        verdict = self.verifier.verify_request(
            selection.request_id, selection.request_text, float(signatures.timestamp),
            signatures.nonce, signatures.key_id, signatures.signature, selection.tools,
            self.rules.execute_max_age_s, signatures.policy, signatures.max_tools)
        if verdict.ok:
            return verdict.operator_name
        return self._refuse(selection.request_id, selection.tools, signatures, verdict.reason,
                            verdict.detail)

    def _refuse(self, request_id: str, tools: Sequence[str], signatures: Signatures,
                reason: str, detail: str) -> Ack:
        """Record a refused selection as a security event; the refusal's ack."""
        with self._lock:
            own_record = self.budget.allow(self.clock(), reason, signatures.key_id)
        reply = Ack(request_id, False,
                    f'refused ({reason}): {detail}; nothing was dispatched')
        if not own_record:  # a flood: counted, summarized by tick(), not even acknowledged
            return Ack(reply.request_id, False, reply.reason, publish=False)
        owner = self.verifier.owner(signatures.key_id)
        self.journal.security(SecurityRecord(
            event='execute_refused', stamp=self.clock(), request_id=request_id[:200],
            tools=[t[:100] for t in tools[:64]], claimed_operator=owner,
            key_id=signatures.key_id[:100], key_owner=owner, reason=reason,
            detail=detail))
        self.log('warning',
                 f'SECURITY: refused to execute request {request_id!r} '
                 f'({", ".join(tools)}) signed with key {signatures.key_id!r}'
                 f'{f" of {owner}" if owner else ""}: {reason}: {detail}')
        return reply
