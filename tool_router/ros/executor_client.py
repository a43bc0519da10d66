"""ROS binding for the command line: call /executor/confirm, follow /executor/traces.

The only module of :mod:`tool_router.executor` that talks ROS, through short-lived
:class:`~tool_router.ros.session.RosSession` nodes.

A fresh process's first call can be lost: ``wait_for_service`` says only that *this* side has
matched the server; until the server's reply writer has matched our reader, the answer goes
to nobody (6 of 20 ``tool-router confirm`` calls from fresh processes were never answered).
So :func:`call_service` first sends a **probe** (a request that names nothing, answered at once
and changing nothing: the executor's desk treats an empty confirmation or cancellation so,
listing watches is harmless) until one is answered, as ``tool-router call`` does
(:meth:`tool_router.ros.client.RouteClient._probe`), then sends the call, and sends it again
(``resend``: freshly signed) while it is unanswered, all within ``timeout_s``.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from tool_router.common.errors import ToolRouterError
from tool_router.ros.session import RosSession


PROBE_TIMEOUT_S = 1.0  # per probe while the reply path is discovered
TRY_TIMEOUT_S = 3.0  # at least, per attempt of the call itself (else half the time left)


def call_confirm(request_id: str, tool: str, approve: bool, operator_name: str,
                 service: str = '/executor/confirm', timeout_s: float = 10.0,
                 signed: Any = None, resign: Callable[[], Any] | None = None) -> Any:
    """Call the ConfirmTool service (probe first, resend while unanswered, within timeout_s).

    ``signed`` is a :class:`~tool_router.common.signing.SignedConfirmation` (None = unsigned);
    ``resign()`` makes a fresh one for each resend (a resent nonce would be a replay).
    ToolRouterError when the decision could not be delivered.
    """
    from tool_router.srv import ConfirmTool

    def make(signed: Any) -> Any:
        request = ConfirmTool.Request(request_id=request_id, tool=tool, approve=approve,
                                      operator_name=operator_name)
        if signed is not None:
            request.key_id, request.timestamp = signed.key_id, signed.timestamp
            request.nonce, request.signature = signed.nonce, signed.signature
        return request

    sent = [0]

    def again() -> Any:
        sent[0] += 1
        return make(resign()) if resign is not None else make(signed)

    answer = call_service(ConfirmTool, service, make(signed), timeout_s, 'tool_router_confirm',
                          probe=ConfirmTool.Request(), resend=again,
                          what='the decision was not delivered')
    if sent[0] and not answer.success and answer.message.startswith('no pending'):
        answer.message += ('; it was sent again after no answer came: the first one may have '
                           'decided it (see the trace)')
    return answer


def call_service(srv_type: Any, service: str, request: Any, timeout_s: float = 10.0,
                 prefix: str = 'tool_router_cli', probe: Any = None,
                 resend: Callable[[], Any] | None = None, what: str = '',
                 hint: str = 'is the executor running? `tool-router serve`') -> Any:
    """Call one service and return its response; ToolRouterError when nobody answers in time.

    ``probe``: a request that changes nothing, sent until answered before ``request`` (the
    server can then reach us). While ``request`` is unanswered it is sent again (``resend()``
    makes the next one; None: the same request), until ``timeout_s`` is spent.
    """
    from tool_router.ros.common import client_qos

    session = RosSession(prefix)
    deadline = time.monotonic() + timeout_s
    lost = f'{what}: ' if what else ''
    try:
        client = session.node.create_client(srv_type, service, qos_profile=client_qos())
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise ToolRouterError(f'{lost}service {service} not available after {timeout_s:g} s',
                                  hint=hint)
        if probe is not None and _ask(session, client, probe, deadline, PROBE_TIMEOUT_S,
                                      lambda: probe) is None:
            raise ToolRouterError(f'{lost}{service} never answered within {timeout_s:g} s '
                                  '(its replies do not reach this process)')
        # the reply path works now: give the call most of the time left before resending
        per_try = max(TRY_TIMEOUT_S, (deadline - time.monotonic()) / 2)
        answer = _ask(session, client, request, deadline, per_try, resend or (lambda: request))
        if answer is None:
            raise ToolRouterError(f'{lost}no answer from {service} within {timeout_s:g} s')
        return answer
    finally:
        session.close()


def _ask(session: RosSession, client: Any, request: Any, deadline: float, per_try_s: float,
         again: Callable[[], Any]) -> Any:
    """Send ``request`` (then ``again()``) until one is answered or the deadline; None if none."""
    while True:
        future = client.call_async(request)
        wait = min(per_try_s, max(0.01, deadline - time.monotonic()))
        if session.spin_until(future, wait):
            return future.result()
        future.cancel()
        client.remove_pending_request(future)
        if time.monotonic() >= deadline:
            return None
        request = again()


def pending_confirmations(topic: str = '/executor/pending_confirmations',
                          timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """The executor's waiting confirmations (a transient-local topic: read once).

    Each item: request_id, tool, risk, waiting_s and remaining_s, computed now from when the
    wait began (the list is latched: its own ``remaining_s`` is as of its publication).
    """
    from tool_router.msg import PendingConfirmations
    from tool_router.ros.common import latched

    session = RosSession('tool_router_confirm_list')
    box: list[Any] = []
    session.node.create_subscription(PendingConfirmations, topic, box.append, latched(1))
    deadline = time.monotonic() + timeout_s
    try:
        while not box and time.monotonic() < deadline:
            session.spin_once(0.1)
    finally:
        session.close()
    if not box:
        raise ToolRouterError(f'nothing on {topic} within {timeout_s:g} s',
                              hint='is the executor running? `tool-router serve`')
    now = time.time()
    return [{'request_id': p.request_id, 'tool': p.tool, 'risk': p.risk,
             'waiting_s': max(0.0, now - p.opened),
             'remaining_s': max(0.0, p.opened + p.timeout_s - now)} for p in box[-1].pending]


def follow_traces(on_record: Callable[[Any], None], topic: str = '/executor/traces',
                  count: int = 0, timeout_s: float = 0.0) -> int:
    """Call ``on_record`` per ExecutionTrace; stop after ``count`` or ``timeout_s`` (0 = never)."""
    from tool_router.msg import ExecutionTrace

    session = RosSession('tool_router_trace_tail')
    received = [0]

    def callback(msg: Any) -> None:
        received[0] += 1
        on_record(msg)

    session.node.create_subscription(ExecutionTrace, topic, callback, 50)
    deadline = time.monotonic() + timeout_s if timeout_s > 0 else None
    try:
        while session.ok():
            if count and received[0] >= count:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
            session.spin_once(0.2)
    finally:
        session.close()
    return received[0]


class OutcomeWatch:
    """Hears what the executor does with requests: final records, confirmation asks, watches.

    Made *before* the request is sent (or the confirmation given). All three topics are
    transient local on the executor's side (the traces and confirmation requests keep their
    last 50 / ``confirmation_history``, watch events their last 50), so a record published
    before this reader matched still arrives. :meth:`wait` spins until a final record of the
    request arrives, telling ``on_confirmation`` and ``on_watch`` what it hears meanwhile.
    """

    def __init__(self, namespace: str = '', trace_topic: str = 'executor/traces',
                 confirmation_topic: str = 'executor/confirmation_requests',
                 watch_topic: str = 'executor/watch_events') -> None:
        from tool_router.msg import ConfirmationRequest, ExecutionTrace, WatchEvent
        from tool_router.ros.common import latched

        ns = '/' + namespace.strip('/') if namespace.strip('/') else ''
        self.session = RosSession('tool_router_outcome')
        self.traces: list[Any] = []
        self.confirmations: list[Any] = []
        self.watch_events: list[Any] = []
        node = self.session.node
        self.trace_topic = _under(ns, trace_topic)
        self._trace_sub = node.create_subscription(ExecutionTrace, self.trace_topic,
                                                   self.traces.append, latched(50))
        node.create_subscription(ConfirmationRequest, _under(ns, confirmation_topic),
                                 self.confirmations.append, latched(50))
        node.create_subscription(WatchEvent, _under(ns, watch_topic),
                                 self.watch_events.append, latched(50))

    def matched(self, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) until the executor's trace writer is seen."""
        deadline = time.monotonic() + timeout_s
        while self._trace_sub.get_publisher_count() == 0 and time.monotonic() < deadline:
            self.session.spin_once(0.05)
        return self._trace_sub.get_publisher_count() > 0

    def wait(self, request_id: str, bound_s: float,
             done: Callable[[Any], bool] = lambda record: True,
             on_confirmation: Callable[[Any], float] | None = None,
             on_watch: Callable[[Any], None] | None = None) -> Any:
        """The first final record of ``request_id`` that ``done`` accepts, or None.

        None after ``bound_s`` seconds. ``on_confirmation(msg)`` is called once per
        ConfirmationRequest of the request and returns how many seconds to add to the bound
        (the operator's time); ``on_watch(record)`` once per WatchEvent (as a WatchRecord).
        """
        from tool_router.executor.traces import record_from_json

        deadline = time.monotonic() + bound_s
        seen_c = seen_w = seen_t = 0
        while self.session.ok():
            for msg in self.confirmations[seen_c:]:
                seen_c += 1
                if msg.request_id == request_id and on_confirmation is not None:
                    deadline += max(0.0, on_confirmation(msg))
            for msg in self.watch_events[seen_w:]:
                seen_w += 1
                if msg.request_id == request_id and on_watch is not None:
                    on_watch(watch_record_of(msg))
            for msg in self.traces[seen_t:]:
                seen_t += 1
                if msg.request_id == request_id:
                    record = record_from_json(msg.record_json)
                    if done(record):
                        return record
            if time.monotonic() >= deadline:
                return None
            self.session.spin_once(0.1)
        return None

    def watches_of(self, request_id: str, settle_s: float = 2.0,
                   wanted: tuple[str, ...] = ()) -> list[Any]:
        """The watch events of ``request_id`` heard so far (as WatchRecords).

        Waits up to ``settle_s`` for an event of each of the ``wanted`` watch ids first.
        """
        deadline = time.monotonic() + settle_s
        while time.monotonic() < deadline and self.session.ok():
            heard = {m.watch_id for m in self.watch_events if m.request_id == request_id}
            if all(w in heard for w in wanted):
                break
            self.session.spin_once(0.05)
        return [watch_record_of(m) for m in self.watch_events if m.request_id == request_id]

    def close(self) -> None:
        """Destroy the node and its context."""
        self.session.close()

    def __enter__(self) -> 'OutcomeWatch':
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _under(ns: str, name: str) -> str:
    """A relative topic name under the namespace (an absolute one as given)."""
    return name if name.startswith('/') else f'{ns}/{name}'


def watch_record_of(msg: Any) -> Any:
    """A WatchEvent message as the WatchRecord it was made from."""
    from tool_router.executor.traces import WatchRecord
    from tool_router.ros.convert import seconds_of

    return WatchRecord(event=msg.event, stamp=seconds_of(msg.stamp), watch_id=msg.watch_id,
                       request_id=msg.request_id, tool=msg.tool, condition=msg.condition,
                       predicate=msg.predicate, sensor=msg.sensor, expires=msg.expires,
                       samples=msg.samples, value=msg.value or None, reason=msg.reason)
