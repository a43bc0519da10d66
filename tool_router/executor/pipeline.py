"""The executor's decision pipeline for one selection, free of ROS.

Stages: permissions -> confirmations -> dispatch (in clause order) -> one
:class:`~tool_router.executor.traces.TraceRecord`. Confirmation and dispatch
are injected (:class:`Confirmer`, :class:`~tool_router.executor.dispatch.Dispatcher`),
so the node supplies ROS implementations and tests supply fakes.

Hard rules: the request text is never consulted for permissions or
confirmations; a tool with a condition is never run at once: its condition is
read into a predicate (:mod:`.conditions`) and a watch is armed
(:mod:`.watches`) after the request's other tools ran, or, when the condition
cannot be read, the tool is not armed and the trace says why; when a watch
fires, the tool goes through :meth:`ExecutionPipeline.process` again, so its
permission and confirmation are decided then. Shadow mode calls and arms nothing.
With a ``journal``, every state change is handed to it as a
:class:`~tool_router.executor.traces.TraceEvent` before the pipeline acts on it
(write-ahead); a tool whose ``dispatching`` event cannot be written is not called.
Rate limits count invocations when they are dispatched (or would be, in shadow
mode), not when they are asked for: unapproved requests use up nothing.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.catalog import Catalog, Kind
from tool_router.common.choice import ToolChoice, names
from tool_router.common.errors import ToolRouterError
from tool_router.common.conditions import Parsed, Predicate, parse_condition, sensors_of
from tool_router.common.places import Place
from tool_router.executor.dispatch import (Binding, BindingKind, Dispatcher, DispatchResult,
                                           Mode)
from tool_router.executor.permissions import SAFETY_ACTIONS, Action, PermissionPolicy
from tool_router.executor.traces import (Candidate, ConfirmationOutcome, Redactor, Stamps,
                                         ToolTrace, TraceEvent, TraceRecord)
from tool_router.executor.watches import TimePassedError
from tool_router.common.explanation import Explanation



class WatchArmer(Protocol):
    """Arms a condition watch (the :class:`~tool_router.executor.watches.WatchManager`)."""

    def arm(self, request_id: str, tool: str, predicate: Predicate,
            request_text: str = '') -> Any:
        """Arm and return the watch (with ``watch_id``, ``expires_at``); may raise."""
        ...


class Selection(BaseModel):
    """The router's decision as the executor sees it (a SelectedCapabilities, minus ROS)."""

    model_config = ConfigDict(extra='forbid')

    request_id: str
    request_text: str = ''
    choices: list[ToolChoice] = Field(default_factory=list,
                                      description='The tools, in dispatch (clause) order.')
    policy: str = ''
    fallback_used: bool = False
    explanation: Explanation = Field(default_factory=Explanation,
                                     description='Candidates, cuts and screen of the router.')
    routed: float | None = Field(None, description='Router stamp, seconds since the epoch.')
    fired_by: str = Field('', description='Watch id when a fired watch runs this selection.')
    requested_by: str = Field('', description='Operator whose requester signature verified '
                                              "('' = unsigned).")

    @property
    def tools(self) -> list[str]:
        """The tool names, in dispatch order."""
        return names(self.choices)

    @classmethod
    def of(cls, request_id: str, tools: list[str], **fields: Any) -> 'Selection':
        """A selection of unconditional ``tools`` (score 1): a fired watch, a test, a benchmark."""
        return cls(request_id=request_id, choices=[ToolChoice(tool=t, score=1.0) for t in tools],
                   **fields)


class ConfirmRequest(BaseModel):
    """A tool that needs an operator decision."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    request_id: str
    tool: str
    risk: str
    request_text: str
    timeout_s: float


class Confirmer(Protocol):
    """Announces confirmation requests and waits for the operator's decisions."""

    def confirm(self, requests: list[ConfirmRequest]) -> dict[str, ConfirmationOutcome]:
        """Outcome per tool name; tools missing from the answer count as timed out."""
        ...


def _explanation(sel: Selection) -> tuple[list[Candidate], list[str]]:
    """Candidates and dropped names from the router's explanation (else the choices)."""
    why = sel.explanation
    candidates = [Candidate(tool=t, score=s) for t, s in why.candidates]
    if not candidates:
        candidates = [Candidate(tool=c.tool, score=c.score) for c in sel.choices]
    return candidates, list(why.dropped)


class EventJournal(Protocol):
    """Where write-ahead events go: raises when an event is not recorded (see ``keep``)."""

    def __call__(self, event: TraceEvent, keep: bool = False) -> object:
        """Record ``event``; with ``keep`` a record kept in memory is enough."""
        ...


class ExecutionPipeline:
    """Turns one :class:`Selection` into actions and a trace record."""

    def __init__(self, catalog: Catalog, permissions: PermissionPolicy,
                 bindings: dict[str, Binding], confirmer: Confirmer, dispatcher: Dispatcher, *,
                 mode: Mode = Mode.EXECUTE, confirm_timeout_s: float = 30.0,
                 call_timeout_s: float = 3.0, stop_on_failure: bool = True,
                 redactor: Redactor | None = None, watches: WatchArmer | None = None,
                 journal: EventJournal | None = None,
                 clock: Callable[[], float] = time.time,
                 places: Mapping[str, Place] | None = None) -> None:
        self.catalog = catalog
        self.permissions = permissions
        self.bindings = bindings
        self.confirmer = confirmer
        self.dispatcher = dispatcher
        self.mode = mode
        self.confirm_timeout_s = confirm_timeout_s
        self.call_timeout_s = call_timeout_s
        self.stop_on_failure = stop_on_failure
        self.redactor = redactor or Redactor()
        self.watches = watches
        self.journal = journal
        self.clock = clock
        self.places = dict(places or {})  # named points conditions may name (places file)
        self._tools = catalog.by_name

    def process(self, sel: Selection, received: float | None = None) -> TraceRecord:
        """Decide, confirm and dispatch every tool of ``sel``; return its trace record."""
        received = self.clock() if received is None else received
        sel, parsed = condition_order(sel, self.places)
        traces = self._decide(sel, parsed)
        decided = self.clock()
        self._log(sel, 'permission_decided', tools=[t.tool for t in traces],
                  decisions=[t.decision for t in traces])
        self._confirm(sel, traces)
        resolved = self.clock()
        stopped_by = self._dispatch(sel, traces, parsed)
        done = self.clock()
        candidates, drops = _explanation(sel)
        redacted = self.redactor(sel.request_text)
        notes = [f'fired by watch {sel.fired_by}'] if sel.fired_by else []
        return TraceRecord(
            request_id=sel.request_id, mode=self.mode.value, request_text=redacted,
            requested_by=sel.requested_by,
            redacted=self.redactor.enabled, policy=sel.policy, fallback_used=sel.fallback_used,
            candidates=candidates, validation_drops=drops,
            stamps=Stamps(routed=sel.routed, received=received, permissions_decided=decided,
                          confirmations_resolved=resolved, dispatch_done=done),
            tools=traces,
            failure_mode=next((t.failure_mode for t in traces if t.failure_mode), ''),
            stop_reason=self._stop_reason(traces, stopped_by), notes=notes)

    def received_event(self, sel: Selection, received: float) -> TraceEvent:
        """The write-ahead ``received`` event of a selection (the node writes it before acking)."""
        return TraceEvent(event='received', request_id=sel.request_id, stamp=received,
                          tools=list(sel.tools), mode=self.mode.value,
                          request_text=self.redactor(sel.request_text))

    def unprocessed(self, sel: Selection, received: float, stop_reason: str,
                    message: str) -> TraceRecord:
        """The final record of a selection that never ran.

        ``stop_reason`` is expired, cancelled_at_shutdown or refused; its tools are
        'expired' or 'cancelled', nothing was decided or called.
        """
        outcome = 'expired' if stop_reason == 'expired' else 'cancelled'
        tools = [ToolTrace(**c.model_dump(), decision='undecided', reason=message,
                           outcome=outcome, message=message) for c in sel.choices]
        candidates, drops = _explanation(sel)
        return TraceRecord(
            request_id=sel.request_id, mode=self.mode.value,
            request_text=self.redactor(sel.request_text), redacted=self.redactor.enabled,
            policy=sel.policy, fallback_used=sel.fallback_used, candidates=candidates,
            validation_drops=drops,
            stamps=Stamps(routed=sel.routed, received=received, dispatch_done=self.clock()),
            tools=tools, stop_reason=stop_reason, notes=[message])

    def _log(self, sel: Selection, event: str, keep: bool | None = None,
             **fields: object) -> bool:
        """Hand one state change to the journal; False when it could not be recorded.

        ``keep``: a record the journal could only keep in memory counts as recorded (the safety
        actions run on a full disk; tool_router/executor/sink.py). By default the events of a
        selection that holds a safety action are kept; ``dispatching`` says per tool.
        """
        if self.journal is None:
            return True
        if keep is None:
            keep = not SAFETY_ACTIONS.isdisjoint(sel.tools)
        try:
            self.journal(TraceEvent(event=event, request_id=sel.request_id,
                                    stamp=self.clock(), **fields), keep)
        except Exception:  # noqa: BLE001 - the journal reports its own errors
            return False
        return True

    # -- stages ------------------------------------------------------------
    def _decide(self, sel: Selection, parsed: dict[int, Parsed]) -> list[ToolTrace]:
        traces = []
        for i, choice in enumerate(sel.choices):
            tool, condition = choice.tool, choice.condition
            # a conditional tool's permission is only previewed now; it counts when it fires
            decision = self.permissions.decide(tool)
            known = self._tools.get(tool)
            binding = self.bindings.get(tool)
            trace = ToolTrace(
                **choice.model_dump(), risk=known.risk.value if known else '',
                decision=decision.action.value, reason=decision.reason,
                endpoint=binding.spec if binding else '',
                outcome='denied' if decision.action is Action.DENY else 'shadow',
                failure_mode=decision.failure_mode)
            reading = parsed.get(i)
            if condition and decision.failure_mode != 'router_fault' and reading is not None:
                trace.failure_mode = ''
                if isinstance(reading, Predicate):
                    trace.outcome = 'armed'  # armed in _dispatch, after the earlier tools ran
                    trace.message = f'waits for {reading.describe()}; permission is decided ' \
                                    'again when it fires'
                else:
                    trace.outcome, trace.failure_mode = 'not_armed', 'condition_unreadable'
                    trace.message = f'condition not executable: {reading.reason}'
            traces.append(trace)
        return traces

    def _confirm(self, sel: Selection, traces: list[ToolTrace]) -> None:
        waiting = [t for t in traces if t.decision == 'confirm' and not t.condition
                   and t.outcome != 'denied']
        if not waiting:
            return
        if self.mode is Mode.SHADOW:
            for t in waiting:
                t.confirmation = ConfirmationOutcome(outcome='not_requested')
            return
        requests = [ConfirmRequest(request_id=sel.request_id, tool=t.tool, risk=t.risk,
                                   request_text=sel.request_text,
                                   timeout_s=self.confirm_timeout_s) for t in waiting]
        for t in waiting:
            self._log(sel, 'awaiting_confirmation', tool=t.tool,
                      detail=f'timeout {self.confirm_timeout_s:g} s')
        outcomes = self.confirmer.confirm(requests)
        for t in waiting:
            result = outcomes.get(t.tool) or ConfirmationOutcome(outcome='timeout')
            t.confirmation = result
            self._log(sel, 'confirmation', tool=t.tool, outcome=result.outcome,
                      detail=result.operator_name)
            if result.outcome != 'approved':
                t.outcome = 'denied'
                t.failure_mode = f'confirmation_{result.outcome}'
                who = f' by {result.operator_name}' if result.operator_name else ''
                t.message = {
                    'denied': f'operator denied{who}',
                    'interrupted': 'interrupted by shutdown while waiting for an operator',
                    'over_limit': 'not asked: too many confirmations of this tool already pending',
                }.get(result.outcome, f'no operator decision within {self.confirm_timeout_s:g} s')

    def _dispatch(self, sel: Selection, traces: list[ToolTrace], parsed: dict[int, Parsed]) -> str:
        """Dispatch in order; return the actuator that stopped the request ('' = none)."""
        stopped_by = ''
        for i, t in enumerate(traces):
            if t.outcome == 'not_armed':
                continue
            known = self._tools.get(t.tool)
            actuator = known is None or known.kind is Kind.ACTUATOR
            if t.outcome == 'armed':
                self._arm(sel, t, stopped_by, parsed[i])
                continue
            if t.outcome == 'denied':
                if actuator and self.stop_on_failure and not stopped_by:
                    stopped_by = t.tool
                continue
            if stopped_by and actuator and self.mode is not Mode.SHADOW:
                t.outcome = 'skipped_after_failure'
                t.message = f'skipped: {stopped_by} was denied or failed earlier in the request'
                continue
            limited = self.permissions.consume(t.tool)
            if limited is not None:  # counted only now: approved or allowed, about to run
                t.outcome, t.failure_mode, t.reason = 'denied', 'rate_limited', limited
                t.message = limited
                if actuator and self.stop_on_failure and not stopped_by:
                    stopped_by = t.tool
                continue
            if self.mode is Mode.SHADOW:
                t.outcome = 'shadow'
                t.message = 'shadow mode: decided, not executed'
                continue
            binding = self.bindings.get(t.tool)
            if self.mode is Mode.DRY_RUN or (binding and binding.kind is BindingKind.DRY_RUN):
                t.outcome = 'dry_run'
                t.message = 'dry run: not executed'
                continue
            if binding is None:
                t.outcome, t.failure_mode = 'failed', 'endpoint_unreachable'
                t.message = 'no binding configured for this tool'
            elif not self._log(sel, 'dispatching', keep=t.tool in SAFETY_ACTIONS, tool=t.tool,
                               detail=binding.spec):
                t.outcome, t.failure_mode = 'failed', 'trace_unwritable'
                t.message = ('not called: the dispatching record could not be written (on a '
                             'full disk only safety actions run)')
            else:
                start = time.perf_counter()
                try:
                    result = self.dispatcher.dispatch(t.tool, binding, sel.request_id,
                                                      sel.request_text, self.call_timeout_s)
                except Exception as exc:  # noqa: BLE001 - a dispatch bug must not lose the trace
                    result = DispatchResult(False, f'internal error: {exc!r}', 'internal_error')
                t.latency_ms = round((time.perf_counter() - start) * 1000.0, 3)
                t.finished = self.clock()
                t.message = result.message
                t.outcome = 'dispatched' if result.ok else 'failed'
                t.failure_mode = '' if result.ok else (result.failure_mode or 'call_failed')
                self._log(sel, 'dispatched', tool=t.tool, outcome=t.outcome, detail=t.message)
            if t.outcome == 'failed' and actuator and self.stop_on_failure and not stopped_by:
                stopped_by = t.tool
        return stopped_by

    def _arm(self, sel: Selection, t: ToolTrace, stopped_by: str, predicate: Parsed) -> None:
        """Arm the watch of a conditional tool (or say why it is not armed)."""
        if self.mode is Mode.SHADOW:
            t.outcome, t.message = 'shadow', f'shadow mode: would {t.message}'
            return
        if stopped_by and self.stop_on_failure:
            t.outcome = 'skipped_after_failure'
            t.message = f'not armed: {stopped_by} was denied or failed earlier in the request'
            return
        if self.watches is None or not isinstance(predicate, Predicate):
            t.outcome, t.failure_mode = 'not_armed', 'internal_error'
            t.message = 'not armed: this executor runs without condition watches'
            return
        try:
            watch = self.watches.arm(sel.request_id, t.tool, predicate, sel.request_text)
        except TimePassedError as exc:  # "at 14:30" at 15:02: never today, and not at once
            t.outcome, t.failure_mode = 'not_armed', 'condition_unreadable'
            t.message = f'condition not executable: {exc.what}; {exc.hint}'
            return
        except ToolRouterError as exc:
            t.outcome, t.failure_mode = 'not_armed', 'watch_limit'
            t.message = f'not armed: {exc.what}'
            return
        t.watch_id = watch.watch_id
        t.finished = self.clock()
        t.message = (f'watch {watch.watch_id} armed: {t.tool} runs once when '
                     f'{predicate.describe()} (expires in {watch.expires_at - t.finished:.0f} s; '
                     'permission decided when it fires)')

    def _stop_reason(self, traces: list[ToolTrace], stopped_by: str) -> str:
        if not traces:
            return 'no_tools'
        if self.mode is Mode.SHADOW:
            return 'shadow_mode'
        if any(t.outcome == 'skipped_after_failure' for t in traces):
            return f'aborted_after:{stopped_by}'
        if any(t.outcome in ('denied', 'failed') for t in traces):
            return 'completed_with_errors'
        return 'completed'


def condition_order(sel: Selection, places: Mapping[str, Place] | None = None
                    ) -> tuple[Selection, dict[int, Parsed]]:
    """Read each condition and put the sensors it names before the tool it gates.

    Returns the (possibly reordered) selection and, per choice index of that
    selection, the parsed condition of each conditional tool. Each condition is read with the
    selection's other tools, the request text (a pronoun's referent) and ``places``.
    """
    tools = sel.tools
    order = list(range(len(tools)))
    for i, choice in enumerate(sel.choices):
        if not choice.condition:
            continue
        others = tools[:i] + tools[i + 1:]
        for sensor in sensors_of(parse_condition(choice.condition, others, places,
                                                 sel.request_text)):
            if sensor in tools and order.index(tools.index(sensor)) > order.index(i):
                order.remove(tools.index(sensor))
                order.insert(order.index(i), tools.index(sensor))
    if order != list(range(len(tools))):
        sel = sel.model_copy(update={'choices': [sel.choices[j] for j in order]})
    tools = sel.tools
    parsed = {i: parse_condition(c.condition, tools[:i] + tools[i + 1:], places, sel.request_text)
              for i, c in enumerate(sel.choices) if c.condition}
    return sel, parsed
