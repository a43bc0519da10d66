"""The operators' desk: approving or denying a waiting tool, cancelling a watch (pure).

The node converts a ``ConfirmTool`` / ``CancelWatch`` call to a :class:`ConfirmCall` /
:class:`CancelCall`, and sends back the :class:`Answer`. A confirmation is signed by an
operator whose role covers the tool's risk
(:class:`~tool_router.executor.auth.ConfirmationVerifier`); a refused one is a
:class:`~tool_router.executor.auth.SecurityRecord` on disk and decides nothing.
A watch cancellation is signed the same way
(:meth:`~tool_router.executor.auth.ConfirmationVerifier.verify_cancel`: the role must cover
every watched action, and a failsafe -- land, return_to_home, hold_position, emergency_stop --
needs a pilot); the trace names the verified operator, a refused one is a ``cancel_refused``
security record. ``insecure_confirmations`` (bench testing) accepts unsigned decisions and
cancellations, recorded as such.

An empty call (no request id, no tool or watch id, no signature) is a **probe**: a fresh client
sends it until it is answered, so the reply path is known to work before the real call goes
out (``tool-router confirm`` / ``watch cancel``). It decides nothing and records nothing.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from pydantic import BaseModel, ConfigDict

from tool_router.executor.auth import SecurityRecord, Verdict
from tool_router.executor.confirmations import ConfirmationBook


class ConfirmCall(BaseModel):
    """One operator decision on a waiting tool ('' tool = every waiting tool of the request)."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    request_id: str
    tool: str = ''
    approve: bool = False
    operator_name: str = ''
    key_id: str = ''
    timestamp: float = 0.0
    nonce: str = ''
    signature: str = ''


    @property
    def probe(self) -> bool:
        """Names nothing and carries no signature: a client checking the reply path."""
        return not (self.request_id or self.tool or self.key_id or self.signature)


class CancelCall(BaseModel):
    """Cancel one watch by id, or every watch of a request (signed by an operator)."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    watch_id: str = ''
    request_id: str = ''
    operator_name: str = ''
    key_id: str = ''
    timestamp: float = 0.0
    nonce: str = ''
    signature: str = ''

    @property
    def probe(self) -> bool:
        """Names nothing and carries no signature: a client checking the reply path."""
        return not (self.watch_id or self.request_id or self.key_id or self.signature)


PROBE_ANSWER = 'empty request (probe): nothing was decided'


@dataclass(frozen=True)
class Answer:
    """The desk's answer: success, a message for the operator, what it affected."""

    success: bool
    message: str
    affected: list[str] = field(default_factory=list)


class ConfirmVerifier(Protocol):
    """Checks confirmation signatures (the executor's ConfirmationVerifier)."""

    def verify(self, request_id: str, tool: str, approve: bool, timestamp: float, nonce: str,
               key_id: str, signature: str, covered: list[str]) -> Verdict:
        """The verdict on one signed confirmation."""
        ...

    def verify_cancel(self, watch_id: str, request_id: str, timestamp: float, nonce: str,
                      key_id: str, signature: str, tools: list[str]) -> Verdict:
        """The verdict on one signed watch cancellation."""
        ...

    def owner(self, key_id: str) -> str:
        """The operator a key id belongs to ('' if none)."""
        ...


class WatchCanceller(Protocol):
    """Cancels watches (the executor's WatchManager)."""

    def snapshot(self, include_ended: bool = False) -> list[Any]:
        """Copies of the armed watches."""
        ...

    def cancel(self, watch_id: str = '', request_id: str = '',
               reason: str = 'cancelled by the operator') -> list[Any]:
        """Cancel and return the watches cancelled."""
        ...


@dataclass
class Desk:
    """Takes operators' decisions; ``security(record)`` writes a refusal before it is answered."""

    book: ConfirmationBook
    verifier: ConfirmVerifier
    watches: WatchCanceller
    security: Callable[[SecurityRecord], None]
    insecure_confirmations: bool = False
    clock: Callable[[], float] = time.time
    log: Callable[[str, str], None] = lambda level, message: None

    def confirm(self, call: ConfirmCall) -> Answer:
        """Approve or deny; a refused signature decides nothing and is recorded."""
        if call.probe:
            return Answer(False, PROBE_ANSWER)
        claimed = call.operator_name.strip() or '(unnamed)'
        if self.insecure_confirmations:
            operator_name = f'{claimed} (unsigned)'
        else:
            covered = [t for rid, t in self.book.pending()
                       if rid == call.request_id and (not call.tool or t == call.tool)]
            verdict = self.verifier.verify(call.request_id, call.tool, call.approve,
                                           float(call.timestamp), call.nonce, call.key_id,
                                           call.signature, covered)
            if not verdict.ok:
                return self._refuse(call, claimed, verdict.reason, verdict.detail)
            operator_name = verdict.operator_name
        affected = self.book.resolve(call.request_id, call.tool, call.approve, operator_name)
        verb = 'approved' if call.approve else 'denied'
        if affected:
            message = f'{verb} {", ".join(affected)} of {call.request_id}'
            self.log('info', f'{operator_name} {message}')
            return Answer(True, message, affected)
        what = call.tool or 'any tool'
        return Answer(False, f'no pending confirmation for {what} of request '
                             f'{call.request_id!r} (unknown, already decided or timed out)')

    def cancel_watch(self, call: CancelCall) -> Answer:
        """Cancel a watch (or a request's watches); a refused signature cancels nothing."""
        if call.probe:
            return Answer(False, PROBE_ANSWER)
        claimed = call.operator_name.strip() or '(unnamed)'
        if self.insecure_confirmations:
            who = f'{claimed} (unsigned)'
        else:
            covered = [w.tool for w in self.watches.snapshot()
                       if (call.watch_id and w.watch_id == call.watch_id)
                       or (call.request_id and w.request_id == call.request_id)]
            verdict = self.verifier.verify_cancel(call.watch_id, call.request_id,
                                                  float(call.timestamp), call.nonce,
                                                  call.key_id, call.signature, covered)
            if not verdict.ok:
                return self._refuse_cancel(call, claimed, covered, verdict)
            who = verdict.operator_name
        cancelled = self.watches.cancel(call.watch_id, call.request_id,
                                        reason=f'cancelled by {who}')
        ids = [w.watch_id for w in cancelled]
        if ids:
            self.log('info', f'{who} cancelled {", ".join(ids)}')
            return Answer(True, f'cancelled {", ".join(ids)}', ids)
        target = call.watch_id or (f'request {call.request_id!r}' if call.request_id else '')
        return Answer(False, f'no armed watch for {target or "(nothing given)"} '
                             '(unknown or already ended)')

    def _refuse(self, call: ConfirmCall, claimed: str, reason: str, detail: str) -> Answer:
        """Record a refused confirmation as a security event; it decides nothing."""
        self.security(SecurityRecord(
            stamp=self.clock(), request_id=call.request_id[:200], tool=call.tool[:100],
            approve=call.approve, claimed_operator=claimed[:100], key_id=call.key_id[:100],
            key_owner=self.verifier.owner(call.key_id), reason=reason,
            detail=detail))
        self.log('warning',
                 f'SECURITY: refused confirmation of {call.tool or "every tool"} of request '
                 f'{call.request_id!r} claimed by {claimed!r} (key {call.key_id!r}): '
                 f'{reason}: {detail}')
        return Answer(False, f'refused ({reason}): {detail}; nothing was approved or denied')

    def _refuse_cancel(self, call: CancelCall, claimed: str, tools: list[str],
                       verdict: Verdict) -> Answer:
        """Record a refused watch cancellation as a security event; it cancels nothing."""
        self.security(SecurityRecord(
            event='cancel_refused', stamp=self.clock(), request_id=call.request_id[:200],
            watch_id=call.watch_id[:200], tools=tools[:32], claimed_operator=claimed[:100],
            key_id=call.key_id[:100], key_owner=self.verifier.owner(call.key_id),
            reason=verdict.reason, detail=verdict.detail))
        target = call.watch_id or f'the watches of request {call.request_id!r}'
        self.log('warning',
                 f'SECURITY: refused to cancel {target} claimed by {claimed!r} (key '
                 f'{call.key_id!r}): {verdict.reason}: {verdict.detail}')
        return Answer(False, f'refused ({verdict.reason}): {verdict.detail}; nothing was '
                             'cancelled')
