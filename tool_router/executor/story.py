"""What the vehicle did, in words: per-tool outcome lines, hints, a request's whole story (pure).

The command line prints these (``tool-router call --execute``, ``confirm``, ``trace tail``,
``trace show``); they are built from the executor's own records
(:mod:`tool_router.executor.traces`), so what the operator reads is what the trace says.

* :func:`outcome_lines`: one line per tool of a final record: tool, endpoint, outcome, and
  the detail (what the vehicle answered, why it was refused, who confirmed it, which watch
  waits), then the stop reason;
* :func:`record_ok`: whether every tool did what was asked (the exit status of ``call``);
* :func:`confirm_hint`, :func:`namespace_option`: the commands to type next, with the
  ``--namespace`` the operator gave (a hint without it fails on a namespaced vehicle);
* :func:`story`: everything the trace files hold about one request, in time order.
"""
from __future__ import annotations

import time
from typing import Any, Iterable

from tool_router.executor.traces import (RequestView, ToolTrace, TraceEvent, TraceRecord,
                                         WatchRecord, fold)

# Outcomes that did what the request asked (or, in dry-run and shadow mode, all that was
# asked of the executor). Anything else (failed, denied, not_armed, skipped_after_failure,
# expired, cancelled, skipped_conditional) makes `tool-router call` exit non-zero.
OK_OUTCOMES = frozenset({'dispatched', 'dry_run', 'shadow', 'armed'})


def namespace_option(namespace: str) -> str:
    """' --namespace uav1' for a namespace ('uav1', '/uav1/'), '' for none."""
    ns = namespace.strip().strip('/')
    return f' --namespace {ns}' if ns else ''


def operator_option(operator: str) -> str:
    """' --operator alice' when an operator was named, else ''."""
    return f' --operator {operator}' if operator.strip() else ''


def confirm_hint(request_id: str, tool: str, namespace: str = '', operator: str = '') -> str:
    """The command that approves ``tool`` of ``request_id`` (``--deny`` refuses it)."""
    return (f'tool-router confirm {request_id} {tool} --approve'
            f'{operator_option(operator)}{namespace_option(namespace)}')


def show_hint(request_id: str) -> str:
    """The command that prints a request's whole story from the trace files."""
    return f'tool-router trace show {request_id}'


def clock(stamp: float) -> str:
    """An epoch time as HH:MM:SS UTC (the executor's clock is UTC)."""
    return time.strftime('%H:%M:%S', time.gmtime(stamp)) + ' UTC'


def tool_ok(tool: ToolTrace) -> bool:
    """Whether this tool did what was asked (see :data:`OK_OUTCOMES`)."""
    return tool.outcome in OK_OUTCOMES


def record_ok(record: TraceRecord) -> bool:
    """Whether every tool of the record did what was asked (no tool: not ok)."""
    return bool(record.tools) and all(tool_ok(t) for t in record.tools)


def confirmation_text(tool: ToolTrace) -> str:
    """How the tool's operator confirmation ended, in words ('' = none was asked)."""
    c = tool.confirmation
    if c is None or c.outcome == 'not_requested':
        return ''
    who = f' by {c.operator_name}' if c.operator_name else ''
    if c.outcome == 'approved':
        return f'approved{who} after {c.waited_s:.1f} s'
    if c.outcome == 'denied':
        return f'denied{who} after {c.waited_s:.1f} s'
    if c.outcome == 'timeout':
        return f'no operator decision within {c.waited_s:.0f} s'
    return c.outcome.replace('_', ' ')


def tool_detail(tool: ToolTrace, watch: WatchRecord | None = None) -> str:
    """What happened to one tool, beyond its outcome: the vehicle's answer or the reason."""
    parts: list[str] = []
    if tool.failure_mode:
        parts.append(f'{tool.failure_mode}:')
    message = _shown(tool.message)  # a sensor's 'reading: {...}' line is for the watches
    if tool.outcome == 'denied' and tool.reason and tool.reason not in message:
        message = f'{message}; {tool.reason}' if message else tool.reason
    if message:
        parts.append(message)
    elif tool.reason and not tool_ok(tool):
        parts.append(tool.reason)
    confirmed = confirmation_text(tool)
    if confirmed and tool.outcome != 'denied':
        parts.append(f'({confirmed})')
    if watch is not None and tool.outcome == 'armed' and 'expires' not in message:
        parts.append(f'(expires {clock(watch.expires)})')
    return ' '.join(parts)


def tool_line(tool: ToolTrace, width: int = 15, endpoint_width: int = 16,
              watch: WatchRecord | None = None) -> str:
    """``tool  endpoint  outcome  detail`` in columns."""
    return (f'{tool.tool:{width}s}  {tool.endpoint or "-":{endpoint_width}s}  '
            f'{tool.outcome:11s} {tool_detail(tool, watch)}').rstrip()


def outcome_lines(record: TraceRecord, watches: Iterable[WatchRecord] = (),
                  indent: str = '') -> list[str]:
    """One line per tool of ``record`` and a last line with the stop reason."""
    armed = {w.watch_id: w for w in watches if w.event == 'armed'}
    width = max([len(t.tool) for t in record.tools] + [10])
    ep_width = max([len(t.endpoint) for t in record.tools] + [8])
    lines = [indent + tool_line(t, width, ep_width, armed.get(t.watch_id))
             for t in record.tools]
    failed = [t.tool for t in record.tools if not tool_ok(t)]
    verdict = f'not done: {", ".join(failed)}' if failed else 'every tool done'
    if not record.tools:
        verdict = 'no tool'
    lines.append(f'{indent}[{record.stop_reason}; {verdict}]')
    return lines


def waiting_lines(request_id: str, tool: str, risk: str, timeout_s: float,
                  namespace: str = '', operator: str = '') -> list[str]:
    """What ``call`` prints when a tool of its request waits for an operator."""
    risk_text = f' ({risk})' if risk else ''
    return [f'{tool}{risk_text} waits for an operator: denied unless confirmed within '
            f'{timeout_s:g} s',
            f'  {confirm_hint(request_id, tool, namespace, operator)}   (or --deny)']


def watch_lines(watch: WatchRecord, namespace: str = '', now: float | None = None) -> list[str]:
    """What ``call`` prints under the tool lines for a watch its request armed.

    The tool's line says what the watch waits for; this one when it expires (the executor's
    ``watch_ttl_s``) and the commands that list or cancel it.
    """
    now = time.time() if now is None else now
    left = max(0.0, watch.expires - now)
    ns = namespace_option(namespace)
    return [f'watch {watch.watch_id} expires at {clock(watch.expires)} (in {left:.0f} s) unless '
            f'it fires first: tool-router watch list{ns} | '
            f'tool-router watch cancel {watch.watch_id}{ns}']


def watch_event_text(w: WatchRecord) -> str:
    """One watch record in words."""
    if w.event == 'armed':
        return (f'watch {w.watch_id} armed: {w.tool} runs once when {w.predicate} '
                f'(sensor {w.sensor}; expires {clock(w.expires)})')
    value = f', last value {w.value}' if w.value not in (None, '') else ''
    reason = f': {w.reason}' if w.reason else ''
    return f'watch {w.watch_id} {w.event}{reason} ({w.samples} samples{value})'


def event_text(e: TraceEvent) -> str:
    """One write-ahead event in words."""
    if e.event == 'received':
        return f'received ({e.mode} mode): {", ".join(e.tools) or "no tool"}'
    if e.event == 'permission_decided':
        return 'permissions: ' + ', '.join(f'{t} {d}' for t, d in zip(e.tools, e.decisions))
    if e.event == 'awaiting_confirmation':
        detail = f' ({e.detail})' if e.detail else ''
        return f'{e.tool} waits for an operator{detail}'
    if e.event == 'confirmation':
        who = f' by {e.detail}' if e.detail else ''
        return f'{e.tool} confirmation: {e.outcome}{who}'
    if e.event == 'dispatching':
        return f'{e.tool} dispatching to {e.detail}'
    detail = _shown(e.detail)
    return f'{e.tool} {e.outcome}' + (f': {detail}' if detail else '')


def _shown(message: str) -> str:
    """A message on one line, without a sensor's machine-readable ``reading: {...}`` line."""
    return ' '.join(' '.join(line.split()) for line in message.splitlines()
                    if line.strip() and not line.startswith('reading: '))


def security_text(rec: Any) -> str:
    """One security record (a refused confirmation or execute) in words."""
    who = getattr(rec, 'key_owner', '') or getattr(rec, 'claimed_operator', '') or 'unknown'
    tool = getattr(rec, 'tool', '')
    what = {'confirmation_refused': f'confirmation of {tool or "every pending tool"} refused',
            'execute_refused': 'execute refused, nothing dispatched',
            'mavlink_refused': 'MAVLink messages refused'}.get(getattr(rec, 'event', ''),
                                                                 str(getattr(rec, 'event', '')))
    detail = getattr(rec, 'detail', '')
    return (f'SECURITY: {what} ({getattr(rec, "reason", "")}, key {getattr(rec, "key_id", "")!r} '
            f'of {who})' + (f': {detail}' if detail else ''))


def find_request(records: Iterable[Any], request_id: str) -> tuple[str, list[Any]]:
    """The full id and the records of the request ``request_id`` names.

    An exact id, or a prefix that only one request has; ('', []) when none, ValueError
    when ambiguous.
    """
    records = list(records)
    ids = {getattr(r, 'request_id', '') for r in records}
    if request_id not in ids:
        hits = sorted(i for i in ids if i and i.startswith(request_id))
        if len(hits) > 1:
            raise ValueError(f'{request_id!r} is the start of {len(hits)} request ids: '
                             + ', '.join(hits[:5]))
        if not hits:
            return '', []
        request_id = hits[0]
    return request_id, [r for r in records if getattr(r, 'request_id', '') == request_id]


def _stamp(rec: Any) -> float:
    if isinstance(rec, TraceRecord):
        s = rec.stamps
        return s.dispatch_done if s.dispatch_done is not None else s.received
    return float(getattr(rec, 'stamp', 0.0))


def story(request_id: str, records: Iterable[Any]) -> list[str]:
    """The whole story of one request from its records, in time order.

    Events, final records, watch and security records; ``records`` may hold other
    requests' too.
    """
    mine = [r for r in records if getattr(r, 'request_id', '') == request_id]
    if not mine:
        return [f'no record of request {request_id}']
    view: RequestView = fold(mine).get(request_id) or RequestView(request_id)
    head = view.records[0] if view.records else None
    received = next((e for e in view.events if e.event == 'received'), None)
    text = head.request_text if head else (received.request_text if received else '')
    lines = [f'request {request_id}: "{text}"']
    if head is not None:
        by = head.requested_by or 'unsigned'
        routed = '' if head.stamps.routed is None else f', routed {clock(head.stamps.routed)}'
        lines.append(f'  {head.mode} mode, requested by {by}, policy {head.policy or "-"}'
                     f'{", LLM fallback used" if head.fallback_used else ""}{routed}')
        if head.candidates:
            lines.append('  router candidates: ' + ', '.join(
                f'{c.tool} {c.score:.2f}' for c in head.candidates[:6]))
        if head.validation_drops:
            lines.append(f'  dropped by the allowlist: {", ".join(head.validation_drops)}')
    for rec in sorted(mine, key=_stamp):
        when = time.strftime('%H:%M:%S', time.gmtime(_stamp(rec))) + f'.{_ms(_stamp(rec))}'
        if isinstance(rec, TraceEvent):
            lines.append(f'  {when}  {event_text(rec)}')
        elif isinstance(rec, WatchRecord):
            lines.append(f'  {when}  {watch_event_text(rec)}')
        elif isinstance(rec, TraceRecord):
            fired = f' ({rec.notes[0]})' if rec.notes else ''
            lines.append(f'  {when}  finished: {rec.stop_reason}{fired}')
            lines += outcome_lines(rec, view.watches, indent='      ')
        elif getattr(rec, 'record', '') == 'security':
            lines.append(f'  {when}  {security_text(rec)}')
    if not view.finished and view.events:
        lines.append(f'  unfinished: last state {view.last_state} (the executor stopped '
                     'before the request ended, or it is still running)')
    for watch_id in view.armed_watches:
        lines.append(f'  watch {watch_id} is still armed')
    return lines


def _ms(stamp: float) -> str:
    return f'{int((stamp % 1) * 1000):03d}'
