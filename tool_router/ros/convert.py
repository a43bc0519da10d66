"""Messages <-> models: the one place the ROS interfaces meet the typed core.

Every conversion between a ``tool_router.msg`` / ``tool_router.srv`` type and a pydantic model
of the core lives here, so a node only calls these and publishes; the core never sees a message.
"""
from __future__ import annotations

import uuid
from typing import Any, Iterable

from tool_router.common.choice import ToolChoice, in_clause_order
from tool_router.common.explanation import EvidenceItem, Explanation
from tool_router.executor.pipeline import Selection
from tool_router.executor.traces import TraceRecord, WatchRecord, trace_message_fields
from tool_router.msg import (Evidence, ExecutionTrace, PendingConfirmation, PendingConfirmations,
                             RouteAnswer, SelectedCapabilities, ToolChoice as ToolChoiceMsg,
                             ToolOutcome, WatchEvent, WatchState)
from tool_router.routing.router import RouteResult

SIGNATURE_FIELDS = ('key_id', 'timestamp', 'nonce', 'signature')


def stamp_of(seconds: float) -> Any:
    """A ``builtin_interfaces/Time`` for seconds since the epoch."""
    from builtin_interfaces.msg import Time

    nanos = int(seconds * 1e9)
    return Time(sec=nanos // 1_000_000_000, nanosec=nanos % 1_000_000_000)


def seconds_of(stamp: Any) -> float:
    """Seconds since the epoch of a ``builtin_interfaces/Time``."""
    return float(stamp.sec + stamp.nanosec * 1e-9)


# -- choices -----------------------------------------------------------------------
def choice_msg(choice: ToolChoice) -> Any:
    """A ToolChoice message."""
    return ToolChoiceMsg(
        tool=choice.tool, score=float(choice.score), clause_index=int(choice.clause_index),
        condition=choice.condition,
        evidence=[Evidence(source=e.source, fragment=e.fragment, detail=e.detail,
                           value=float(e.value)) for e in choice.evidence])


def choice_from_msg(msg: Any) -> ToolChoice:
    """The typed choice of a ToolChoice message (validated: a bad one raises ValidationError)."""
    return ToolChoice(
        tool=msg.tool, score=float(msg.score), clause_index=int(msg.clause_index),
        condition=msg.condition,
        evidence=[EvidenceItem(source=e.source, fragment=e.fragment, detail=e.detail,
                               value=float(e.value)) for e in msg.evidence])


# -- selections ----------------------------------------------------------------------
def selection_message(result: RouteResult, stamp: Any, signed: Any = None) -> Any:
    """The executor's view of a decision: its choices in clause (dispatch) order.

    ``signed`` (the RouteRequest or Request that asked) lends its requester signature
    fields, copied untouched: the executor, not the router, checks them.
    """
    msg = SelectedCapabilities()
    msg.stamp = stamp
    msg.request_id = result.request_id
    msg.request_text = result.text
    msg.choices = [choice_msg(c) for c in in_clause_order(result.choices)]
    msg.policy = result.policy
    msg.fallback_used = result.fallback_used
    msg.explanation_json = result.explanation().to_json()
    if signed is not None:
        for name in SIGNATURE_FIELDS:
            setattr(msg, name, getattr(signed, name))
        msg.requested_policy = signed.policy
        msg.requested_max_tools = int(getattr(signed, 'max_tools', 0))  # a Request has none
    return msg


def selection_from_msg(msg: Any) -> Selection:
    """The pipeline's selection of a SelectedCapabilities message (ValidationError if bad).

    An unreadable explanation reads as an empty one: the choices stand on their own.
    """
    routed = seconds_of(msg.stamp)
    return Selection(
        request_id=msg.request_id or f'exec-{uuid.uuid4().hex[:12]}',
        request_text=msg.request_text,
        choices=[choice_from_msg(c) for c in msg.choices],
        policy=msg.policy,
        fallback_used=bool(msg.fallback_used),
        explanation=Explanation.read(msg.explanation_json),
        routed=routed or None,
    )


# -- traces, watches, confirmations ------------------------------------------------
def trace_msg(record: TraceRecord) -> Any:
    """The ExecutionTrace message of a final record (its ToolOutcome per tool)."""
    fields = trace_message_fields(record)
    fields['tools'] = [ToolOutcome(**t) for t in fields['tools']]
    done = record.stamps.dispatch_done or record.stamps.received
    return ExecutionTrace(stamp=stamp_of(done), **fields)


def _shown(value: object) -> str:
    return '' if value is None else (f'{value:.6g}' if isinstance(value, float) else str(value))


def watch_event_msg(record: WatchRecord) -> Any:
    """The WatchEvent message of a watch record."""
    return WatchEvent(stamp=stamp_of(record.stamp), event=record.event,
                      watch_id=record.watch_id, request_id=record.request_id, tool=record.tool,
                      condition=record.condition, predicate=record.predicate,
                      reason=record.reason, sensor=record.sensor, expires=float(record.expires),
                      samples=int(record.samples), value=_shown(record.value))


def watch_state_msg(watch: Any) -> Any:
    """The WatchState message of a :class:`~tool_router.executor.watches.Watch`."""
    return WatchState(watch_id=watch.watch_id, request_id=watch.request_id, tool=watch.tool,
                      condition=watch.predicate.text, predicate=watch.predicate.describe(),
                      state=watch.state, armed_at=float(watch.armed_at),
                      expires_at=float(watch.expires_at), samples=int(watch.samples),
                      value=_shown(watch.value), last_error=watch.last_error,
                      reason=watch.reason)


def pending_msg(entries: Iterable[Any], now: float, stamp: Any) -> Any:
    """The PendingConfirmations message of the confirmation book's open entries.

    ``entries`` are :class:`~tool_router.executor.confirmations.Pending`; ``now`` is on the
    book's clock (that of ``opened``), so the time left is the book's own.
    """
    return PendingConfirmations(stamp=stamp, pending=[
        PendingConfirmation(request_id=e.request_id, tool=e.tool, risk=e.risk,
                            opened=float(e.opened_at), timeout_s=float(e.timeout_s),
                            remaining_s=max(0.0, float(e.opened + e.timeout_s - now)))
        for e in entries])


def plain_selection(request_id: str, request_text: str, tools: Iterable[str],
                    conditions: Iterable[str] = (), policy: str = 'test',
                    score: float = 0.5) -> Any:
    """A SelectedCapabilities of ``tools`` (one clause each, in order) for a stand-in router.

    Tests and benchmarks that play the router publish these; ``conditions`` gate the tools
    at the same positions (missing ones are unconditional). Unsigned: sign it afterwards.
    """
    listed, gates = list(tools), list(conditions)
    msg = SelectedCapabilities(request_id=request_id, request_text=request_text, policy=policy)
    msg.choices = [choice_msg(ToolChoice(tool=t, score=score, clause_index=i,
                                         condition=gates[i] if i < len(gates) else ''))
                   for i, t in enumerate(listed)]
    return msg


def route_answer_msg(response: Any, client_id: str, caller_request_id: str,
                     stamp: Any) -> Any:
    """A RouteRequest response as the client's RouteAnswer (the request topic's answer path).

    The request_id is the caller's when the router made none (a busy or refused request).
    """
    return RouteAnswer(
        stamp=stamp, client_id=client_id,
        request_id=response.request_id or caller_request_id, success=response.success,
        message=response.message, tools=list(response.tools),
        choices=list(response.choices), policy=response.policy,
        fallback_used=response.fallback_used, fallback_reason=response.fallback_reason,
        latency_ms=response.latency_ms, dropped=list(response.dropped),
        explanation_json=response.explanation_json, executed=response.executed)
