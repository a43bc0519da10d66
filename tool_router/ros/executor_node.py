"""The executor node: permissions, confirmations and dispatch of the router's selections.

Thin ROS glue over :class:`tool_router.executor.pipeline.ExecutionPipeline`:

* subscribes to SelectedCapabilities (``tool_router/selected``); with
  ``require_signed_execute`` (the default) a selection whose requester signature does
  not verify is refused (a ``security`` trace record, a refused ack), nothing dispatched;
  otherwise writes the
  ``received`` event (fsync'd), acknowledges it on ``executor/acks`` and queues it
  for a worker thread (bounded: ``max_queue``; a selection that waited longer than
  ``max_selection_age_s`` is traced ``expired``, not dispatched);
* announces ``confirm`` tools on ``executor/confirmation_requests`` (transient
  local) and the pending ones on ``executor/pending_confirmations``; takes
  decisions on the ``executor/confirm`` service (its own callback group);
* calls std_srvs Trigger / SetBool services with ``call_async`` and a deadline,
  or publishes std_msgs/String, as configured in ``bindings``;
* runs the condition watches (:mod:`tool_router.executor.watches`): a timer samples the
  watched sensors through their bindings, a fired watch's tool runs as a new selection;
  events on ``executor/watch_events`` (transient local), services
  ``executor/list_watches`` and ``executor/cancel_watch``;
* appends a write-ahead event per state change and one final record per request
  to the JSONL traces and publishes the final record on ``executor/traces``;
  at shutdown, queued selections get a ``cancelled_at_shutdown`` record.

All names are relative, so ``-r __ns:=/uav1`` moves every one of them.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pydantic
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from tool_router.common.catalog import load_catalog
from tool_router.common.errors import ConfigError, ToolRouterError, first_error
from tool_router.common import signing
from tool_router.common.places import load_places
from tool_router.executor.auth import ConfirmationVerifier, SecurityRecord
from tool_router.executor.chain import load_or_create_chain_key
from tool_router.executor.confirmations import ConfirmationBook
from tool_router.executor.config import ExecutorConfig, load_executor_config
from tool_router.executor.dispatch import Binding, BindingKind, DispatchResult, Mode, setbool_value
from tool_router.executor.permissions import PermissionPolicy, load_permissions
from tool_router.executor.pipeline import ConfirmRequest, ExecutionPipeline, Selection
from tool_router.executor.traces import (
    ConfirmationOutcome,
    Redactor,
    TraceEvent,
    TraceRecord,
    TraceWriter,
    WatchRecord,
    open_watches,
    trace_files,
    trace_message_fields,
    watch_records_in,
)
from tool_router.executor.sampling import BindingSampler, Sampler, TextSampler
from tool_router.executor.watches import Watch, WatchManager
from tool_router.msg import (
    ConfirmationRequest,
    ExecutionTrace,
    SelectedCapabilities,
    SelectionAck,
    WatchEvent,
)
from tool_router.ros.common import (
    ack_qos,
    declare_from_dict,
    parameter_descriptions,
    flatten,
    parameters_as_dict,
    spin,
    startup_problem,
)
from tool_router.srv import CancelWatch, ConfirmTool, ListWatches

RESTART_REASON = 'executor restarted: watches do not survive a restart'

# Parameters that may change while running; the rest need a restart.
LIVE_PARAMS = {
    'mode',
    'confirm_timeout_s',
    'call_timeout_s',
    'stop_on_failure',
    'max_selection_age_s',
    'watch_ttl_s',
}


def urgent(selection: Selection) -> bool:
    """An emergency stop is never queued behind other requests (nor refused for a full queue)."""
    return 'emergency_stop' in selection.tools


def latched(depth: int) -> QoSProfile:
    """Reliable, transient local: a subscriber that joins later still gets the last ``depth``."""
    return QoSProfile(
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def _stamp(seconds: float) -> Any:
    from builtin_interfaces.msg import Time

    nanos = int(seconds * 1e9)
    return Time(sec=nanos // 1_000_000_000, nanosec=nanos % 1_000_000_000)


def selection_from_msg(msg: SelectedCapabilities) -> Selection:
    """Convert a SelectedCapabilities message to the pipeline's plain model."""
    routed = msg.stamp.sec + msg.stamp.nanosec * 1e-9
    return Selection(
        request_id=msg.request_id or f'exec-{uuid.uuid4().hex[:12]}',
        request_text=msg.request_text,
        tools=list(msg.tools),
        scores=[float(s) for s in msg.scores],
        policy=msg.policy,
        fallback_used=bool(msg.fallback_used),
        clause_index=[int(i) for i in msg.clause_index],
        conditions=list(msg.conditions),
        explanation_json=msg.explanation_json,
        routed=routed or None,
    )


class RosDispatcher:
    """Calls Trigger / SetBool services and publishes String messages, with deadlines."""

    def __init__(self, node: Node, bindings: dict[str, Binding]) -> None:
        self._node = node
        self._group = ReentrantCallbackGroup()
        self._clients: dict[tuple[str, str], Any] = {}
        self._publishers: dict[str, Any] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        for binding in bindings.values():
            key = (binding.kind.value, binding.name)
            if binding.kind is BindingKind.TOPIC and binding.name not in self._publishers:
                self._publishers[binding.name] = node.create_publisher(String, binding.name, 10)
            elif (
                binding.kind in (BindingKind.TRIGGER, BindingKind.SETBOOL)
                and key not in self._clients
            ):
                srv = Trigger if binding.kind is BindingKind.TRIGGER else SetBool
                self._clients[key] = node.create_client(
                    srv, binding.name, callback_group=self._group
                )
                self._locks[key] = threading.Lock()

    def dispatch(
        self, tool: str, binding: Binding, request_id: str, request_text: str, timeout_s: float
    ) -> DispatchResult:
        """Perform the bound call; never waits longer than ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        if binding.kind is BindingKind.TOPIC:
            payload = {'request_id': request_id, 'tool': tool, 'request_text': request_text}
            self._publishers[binding.name].publish(String(data=json.dumps(payload)))
            return DispatchResult(True, f'published on {binding.name}')
        key = (binding.kind.value, binding.name)
        client = self._clients.get(key)
        if client is None:
            return DispatchResult(False, f'no client for {binding.spec}', 'internal_error')
        while not client.service_is_ready():
            if time.monotonic() >= deadline:
                return DispatchResult(
                    False,
                    f'service {binding.name} not available within {timeout_s:g} s',
                    'endpoint_unreachable',
                )
            time.sleep(0.005)
        if binding.kind is BindingKind.SETBOOL:
            request: Any = SetBool.Request(data=setbool_value(binding, request_text))
        else:
            request = Trigger.Request()
        done = threading.Event()
        with self._locks[key]:
            future = client.call_async(request)
        future.add_done_callback(lambda _: done.set())
        if not done.wait(max(0.0, deadline - time.monotonic())):
            future.cancel()
            client.remove_pending_request(future)
            return DispatchResult(
                False, f'no answer from {binding.name} within {timeout_s:g} s', 'call_timeout'
            )
        response = future.result()
        if response is None:
            return DispatchResult(False, f'call to {binding.name} failed', 'call_failed')
        return DispatchResult(
            bool(response.success), response.message, '' if response.success else 'call_failed'
        )


class RosConfirmer:
    """Announces confirmation requests on a topic and waits on the ConfirmationBook."""

    def __init__(self, node: 'ExecutorNode', book: ConfirmationBook, publisher: Any) -> None:
        self._node = node
        self._book = book
        self._pub = publisher

    def confirm(self, requests: list[ConfirmRequest]) -> dict[str, ConfirmationOutcome]:
        """Open, announce, then wait for every request until one shared deadline."""
        entries = [(r, self._book.open(r.request_id, r.tool)) for r in requests]
        deadline = time.monotonic() + max(r.timeout_s for r in requests)
        for r, _ in entries:
            self._pub.publish(
                ConfirmationRequest(
                    stamp=_stamp(time.time()),
                    request_id=r.request_id,
                    tool=r.tool,
                    risk=r.risk,
                    request_text=r.request_text,
                    timeout_s=float(r.timeout_s),
                )
            )
            self._node.get_logger().info(
                f'waiting {r.timeout_s:g} s for confirmation of {r.tool} (request {r.request_id})'
                f': tool-router confirm {r.request_id} {r.tool} --approve|--deny'
            )
        return {r.tool: self._book.wait(entry, deadline) for r, entry in entries}


class ExecutorNode(Node):
    """ROS glue: parameters, topics, services; the decisions live in the pipeline."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('executor_node', **kwargs)
        defaults = load_executor_config().model_dump(mode='json')
        self._names = flatten(defaults)
        declare_from_dict(self, defaults, parameter_descriptions(ExecutorConfig))
        self._pool: ThreadPoolExecutor | None = None
        self._writer: TraceWriter | None = None
        self._bag: Any = None
        self._sink_lock = threading.Lock()
        self._queue_lock = threading.Lock()
        self._queued: dict[int, tuple[Selection, float]] = {}  # waiting for a worker
        self._tickets = itertools.count()
        self._closing = False
        self._router_key: bytes | None = None  # read when the first selection needs it
        self._pending_pub: Any = None
        self.book = ConfirmationBook(on_change=self._publish_pending)
        self._error = ''
        try:
            self._build()
        except (ToolRouterError, pydantic.ValidationError, OSError) as exc:
            self._error = startup_problem(exc)

    def startup(self) -> bool:
        """False (after a fatal log line) when the constructor could not build the executor.

        :func:`~tool_router.ros.common.spin` then exits with status 1, as the router
        node does when its configuration fails: one clear line, no traceback.
        """
        if self._error:
            self.get_logger().fatal(f'cannot start: {self._error}')
            return False
        return True

    def _build(self) -> None:
        """Read the parameters, open the traces and the vehicle link, create the interfaces.

        Raises ToolRouterError, ValidationError or OSError on bad input (see :meth:`startup`).
        """
        self.config = ExecutorConfig.model_validate(parameters_as_dict(self, self._names))
        catalog = load_catalog(self.config.resolved_catalog())
        rules = load_permissions(self.config.resolved_permissions(), catalog)
        places = load_places(self.config.places_file or None)
        risks = {t.name: t.risk.value for t in catalog.tools}
        self.verifier = ConfirmationVerifier.from_file(
            self.config.resolved_operators(), lambda tool: risks.get(tool, 'critical'),
            self.config.confirm_max_age_s)
        chain_key = (load_or_create_chain_key(self.config.resolved_chain_key())
                     if self.config.trace_chain else None)
        self._writer = TraceWriter(
            self.config.resolved_trace_dir(),
            self.config.trace_max_bytes,
            fsync=self.config.trace_fsync,
            chain_key=chain_key,
        )
        if self.config.trace_mcap:
            from tool_router.executor.bag import McapTraceBag

            self._bag = McapTraceBag(self.config.resolved_trace_dir(), self.config.trace_topic)
        c = self.config
        bindings = c.parsed_bindings()
        unbound = [t for t in catalog.names if t not in bindings]
        if unbound:
            self.get_logger().warning(f'no binding for {", ".join(unbound)}: they will fail')
        self.book.max_pending_per_tool = c.max_pending_confirmations_per_tool
        self._confirm_pub = self.create_publisher(
            ConfirmationRequest, c.confirmation_topic, latched(c.confirmation_history)
        )
        self._pending_pub = self.create_publisher(String, c.pending_topic, latched(1))
        self._ack_pub = self.create_publisher(SelectionAck, c.ack_topic, ack_qos())
        self._trace_pub = self.create_publisher(ExecutionTrace, c.trace_topic, 50)
        self._watch_pub = self.create_publisher(WatchEvent, c.watch_events_topic, latched(50))
        dispatcher: Any = RosDispatcher(self, bindings)
        self._mavlink: Any = None
        sampler: Sampler = TextSampler(dispatcher, bindings, c.call_timeout_s)
        if c.uses_mavlink():
            dispatcher, sampler = self._open_mavlink(c, dispatcher, sampler, bindings)
        self.watches = WatchManager(
            sampler,
            self._fire_watch,
            self._sink_watch,
            ttl_s=c.watch_ttl_s,
            max_watches=c.max_watches,
        )
        self._cancel_left_open_watches()
        self.pipeline = ExecutionPipeline(
            catalog,
            PermissionPolicy(rules, catalog),
            bindings,
            RosConfirmer(self, self.book, self._confirm_pub),
            dispatcher,
            mode=c.mode,
            confirm_timeout_s=c.confirm_timeout_s,
            call_timeout_s=c.call_timeout_s,
            stop_on_failure=c.stop_on_failure,
            redactor=Redactor(
                c.redact.enabled, c.redact.digits, c.redact.coordinates, c.redact.name_list
            ),
            watches=self.watches,
            journal=self._journal,
            places=places,
        )
        self._pool = ThreadPoolExecutor(
            max_workers=c.max_parallel_requests, thread_name_prefix='executor-request'
        )
        self._confirm_srv = self.create_service(
            ConfirmTool,
            c.confirm_service,
            self._on_confirm,
            callback_group=MutuallyExclusiveCallbackGroup(),
        )
        self._sub = self.create_subscription(
            SelectedCapabilities,
            c.selection_topic,
            self._on_selection,
            50,
            callback_group=MutuallyExclusiveCallbackGroup(),
        )
        watch_group = MutuallyExclusiveCallbackGroup()
        self._list_srv = self.create_service(
            ListWatches, c.list_watches_service, self._on_list_watches, callback_group=watch_group
        )
        self._cancel_srv = self.create_service(
            CancelWatch, c.cancel_watch_service, self._on_cancel_watch, callback_group=watch_group
        )
        self._watch_timer = self.create_timer(
            c.watch_period_s, self.watches.tick, callback_group=MutuallyExclusiveCallbackGroup()
        )
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._announce_confirmation_security()
        self._announce_execute_security()
        self._publish_pending()
        self.get_logger().info(
            f'executor ready: mode {c.mode.value}, {len(bindings)} bindings, listening on '
            f'{c.selection_topic}, traces -> {self._writer.path}'
        )

    def _announce_confirmation_security(self) -> None:
        c, log = self.config, self.get_logger()
        if c.insecure_confirmations:
            for _ in range(3):
                log.warning('INSECURE CONFIRMATIONS: insecure_confirmations is true, so ANYONE '
                            f'on this DDS domain may approve critical tools via '
                            f'{c.confirm_service}. Bench testing only.')
            return
        names = [f'{op.name} ({op.role})' for op in self.verifier.active_operators]
        if names:
            log.info(f'signed confirmations: operators {", ".join(names)} from '
                     f'{c.resolved_operators()}')
        else:
            log.warning(f'no operator keys in {c.resolved_operators()}: every confirmation will '
                        'be refused (tool-router operator add NAME --role pilot)')

    def _announce_execute_security(self) -> None:
        c, log = self.config, self.get_logger()
        if not c.require_signed_execute:
            for _ in range(3):
                log.warning('UNSIGNED EXECUTE: require_signed_execute is false, so ANYONE on this '
                            f'DDS domain may make the vehicle act by publishing on '
                            f'{c.selection_topic}. Bench testing only.')
        elif not self.verifier.active_operators:
            log.warning(f'no operator keys in {c.resolved_operators()}: every selection will be '
                        'refused (require_signed_execute; tool-router operator add NAME)')
        else:
            log.info('signed execute: selections need a requester signature '
                     f'(window {c.execute_max_age_s:g} s)')
        if c.require_router_signature:
            log.info(f"selections need the router's signature (key {c.resolved_router_key()})")
        else:
            log.warning('require_router_signature is false: a selection need not come from the '
                        'router (anyone who copies a signed request may choose its tools)')

    def _open_mavlink(self, c: ExecutorConfig, ros_dispatcher: Any, ros_sampler: Sampler,
                      bindings: dict[str, Binding]) -> tuple[Any, Sampler]:
        """Open the MAVLink link; mavlink bindings go to it, the others stay on ROS."""
        from tool_router.executor.mavlink import (KindRouter, MavlinkDispatcher, MavlinkLink,
                                                  MavlinkSampler)

        try:
            self._mavlink = MavlinkLink(c.mavlink)
        except (OSError, ValueError) as exc:
            raise ConfigError(f'MAVLink {c.mavlink.connection}: {exc}') from None
        self.get_logger().info(
            f'MAVLink link on {c.mavlink.connection} (vehicle {c.mavlink.target_system}/'
            f'{c.mavlink.target_component})'
        )
        threading.Thread(target=self._report_vehicle_link, name='mavlink-link-log',
                         daemon=True).start()
        sampler = BindingSampler(bindings, ros_sampler,
                                 {BindingKind.MAVLINK: MavlinkSampler(self._mavlink)})
        return KindRouter(MavlinkDispatcher(self._mavlink), ros_dispatcher), sampler

    def _report_vehicle_link(self) -> None:
        """Log when the vehicle's first HEARTBEAT arrives (motion commands wait for it)."""
        link, log = self._mavlink, self.get_logger()
        patience = link.config.heartbeat_timeout_s
        if not link.heartbeat_seen.wait(patience):
            log.warning(f'no vehicle heartbeat on {link.config.connection} after {patience:g} s: '
                        'motion commands are refused until one arrives')
            while not link.heartbeat_seen.wait(1.0):
                if self._closing:
                    return
        log.info(f'vehicle heartbeat seen (system {link.config.target_system})')

    # -- callbacks ---------------------------------------------------------
    def _on_selection(self, msg: SelectedCapabilities) -> None:
        received = time.time()
        try:
            selection = selection_from_msg(msg)
        except pydantic.ValidationError as exc:
            self.get_logger().error(f'unusable selection {msg.request_id!r}: {first_error(exc)}')
            return
        # The router's signature first: a forged selection must not use up the nonce of the
        # signed request it copied (the router's genuine selection would then be a replay).
        if not self._check_router(msg, selection):
            return
        requested_by = self._check_requester(msg, selection)
        if requested_by is None:
            return
        selection.requested_by = requested_by
        with self._queue_lock:
            closing, waiting = self._closing, len(self._queued)
        refusal = ''
        if closing or self._pool is None:
            refusal = 'executor shutting down'
        elif waiting >= self.config.max_queue and not urgent(selection):
            refusal = f'executor queue full ({waiting} selections waiting for a worker)'
        if refusal:
            stop = 'cancelled_at_shutdown' if closing else 'refused'
            self._sink(self.pipeline.unprocessed(selection, received, stop, refusal))
            self._ack(selection.request_id, False, refusal)
            self.get_logger().warning(f'request {selection.request_id} not processed: {refusal}')
            return
        accepted, reason = self._enqueue(selection, received)
        self._ack(selection.request_id, accepted, reason)

    def _check_router(self, msg: SelectedCapabilities, selection: Selection) -> bool:
        """Whether the router signed this selection (true without ``require_router_signature``).

        A refusal is traced (``security``, ``execute_refused``) and acknowledged.
        """
        if not self.config.require_router_signature:
            return True
        path = self.config.resolved_router_key()
        key = self._router_key
        if key is None:
            try:  # read when first needed: the router makes the key when it first starts
                key = self._router_key = signing.router_key(path)
            except ConfigError as exc:
                return self._refuse(msg, selection, 'no_router_key',
                                    f'{exc}; the router creates it at configure')
        if signing.router_signature_ok(key, msg.router_signature, msg.request_id, msg.request_text,
                                    msg.tools, msg.clause_index, msg.conditions, msg.nonce):
            return True
        detail = ('no router signature' if not msg.router_signature else
                  'the router signature does not match these tools, conditions and request')
        return self._refuse(msg, selection, 'bad_router_signature', detail)

    def _refuse(self, msg: SelectedCapabilities, selection: Selection, reason: str,
                detail: str) -> bool:
        """Trace, log and acknowledge a selection refused for ``reason``; False."""
        owner = self.verifier.owner(msg.key_id)
        self._write_security(SecurityRecord(
            event='execute_refused', stamp=time.time(), request_id=selection.request_id[:200],
            tools=[t[:100] for t in selection.tools[:64]], claimed_operator=owner,
            key_id=msg.key_id[:100], key_owner=owner, reason=reason,  # type: ignore[arg-type]
            detail=detail))
        self.get_logger().warning(
            f'SECURITY: refused to execute request {selection.request_id!r} '
            f'({", ".join(selection.tools)}) signed with key {msg.key_id!r}'
            f'{f" of {owner}" if owner else ""}: {reason}: {detail}')
        self._ack(selection.request_id, False,
                  f'refused ({reason}): {detail}; nothing was dispatched')
        return False

    def _check_requester(self, msg: SelectedCapabilities, selection: Selection) -> str | None:
        """The verified requester ('' = unsigned and allowed), or None when refused.

        A signature, when present, is always checked; an unsigned selection passes
        only with ``require_signed_execute: false``. A refusal is traced (``security``,
        ``execute_refused``) before it is acknowledged; nothing of it is dispatched.
        """
        signed = bool(msg.key_id or msg.signature)
        if not signed and not self.config.require_signed_execute:
            return ''
        verdict = self.verifier.verify_request(
            selection.request_id, selection.request_text, float(msg.timestamp), msg.nonce,
            msg.key_id, msg.signature, selection.tools, self.config.execute_max_age_s)
        if verdict.ok:
            return verdict.operator_name
        self._refuse(msg, selection, verdict.reason, verdict.detail)
        return None

    def _write_security(self, record: SecurityRecord) -> None:
        with self._sink_lock:
            try:
                if self._writer is not None:
                    self._writer.write(record)  # type: ignore[arg-type]
            except (OSError, ToolRouterError) as exc:
                self.get_logger().error(f'cannot write security record: {exc}')

    def _enqueue(self, selection: Selection, received: float) -> tuple[bool, str]:
        """Write the ``received`` event (write-ahead), then queue the selection for a worker."""
        try:
            self._journal(self.pipeline.received_event(selection, received))
        except (OSError, ToolRouterError) as exc:
            return False, f'trace not writable: {exc}'
        ticket = next(self._tickets)
        with self._queue_lock:
            self._queued[ticket] = (selection, received)
        if urgent(selection):
            # never behind the queue: its own thread, whatever the workers are waiting for
            threading.Thread(target=self._process, args=(ticket,),
                             name='executor-emergency', daemon=True).start()
        elif self._pool is not None:
            self._pool.submit(self._process, ticket)
        return True, ''

    def _ack(self, request_id: str, accepted: bool, reason: str) -> None:
        try:
            self._ack_pub.publish(
                SelectionAck(
                    stamp=_stamp(time.time()),
                    request_id=request_id,
                    accepted=accepted,
                    reason=reason,
                )
            )
        except Exception as exc:  # noqa: BLE001 - context shut down; the trace has it
            self.get_logger().debug(f'ack {request_id} not published: {exc!r}')

    def _journal(self, event: TraceEvent) -> None:
        """Append one write-ahead event (fsync'd); raises when it is not on disk."""
        if self._writer is None:
            raise ToolRouterError('trace writer is closed')
        try:
            self._writer.write(event)
        except (OSError, ToolRouterError) as exc:
            self.get_logger().error(f'cannot write {event.event} of {event.request_id}: {exc}')
            raise

    def _process(self, ticket: int) -> None:
        with self._queue_lock:
            item = self._queued.pop(ticket, None)
        if item is None:  # taken at shutdown: already traced cancelled_at_shutdown
            return
        selection, received = item
        age = time.time() - received
        if age > self.config.max_selection_age_s:
            message = (
                f'not dispatched: waited {age:.1f} s for a worker, more than '
                f'max_selection_age_s {self.config.max_selection_age_s:g} s'
            )
            self._sink(self.pipeline.unprocessed(selection, received, 'expired', message))
            self.get_logger().warning(f'request {selection.request_id} expired: {message}')
            return
        try:
            record = self.pipeline.process(selection, received)
        except Exception as exc:  # noqa: BLE001 - never lose a worker thread silently
            self.get_logger().error(f'request {selection.request_id} failed: {exc!r}')
            return
        self._sink(record)
        summary = ', '.join(f'{t.tool}={t.outcome}' for t in record.tools)
        self.get_logger().info(f'request {record.request_id}: {summary} [{record.stop_reason}]')

    def _publish_pending(self) -> None:
        """The confirmations still waiting, as JSON, for operator UIs (and late joiners)."""
        if self._pending_pub is None:
            return
        now = time.monotonic()
        items = [
            {'request_id': e.request_id, 'tool': e.tool, 'waiting_s': round(now - e.opened, 1)}
            for e in self.book.pending_entries()
        ]
        try:
            self._pending_pub.publish(String(data=json.dumps(items)))
        except Exception as exc:  # noqa: BLE001 - context already shut down
            self.get_logger().debug(f'pending list not published: {exc!r}')

    def _sink(self, record: TraceRecord) -> None:
        with self._sink_lock:
            try:
                if self._writer is not None:
                    self._writer.write(record)
                if self._bag is not None:
                    self._bag.write(record)
            except (OSError, ToolRouterError) as exc:
                self.get_logger().error(f'cannot write trace {record.request_id}: {exc}')
        fields = trace_message_fields(record)
        done = record.stamps.dispatch_done or record.stamps.received
        try:
            self._trace_pub.publish(ExecutionTrace(stamp=_stamp(done), **fields))
        except Exception as exc:  # noqa: BLE001 - context already shut down; the file has it
            self.get_logger().debug(f'trace {record.request_id} not published: {exc!r}')

    # -- watches -------------------------------------------------------------
    def _cancel_left_open_watches(self) -> None:
        """Trace as cancelled the watches a previous executor armed and never ended."""
        assert self._writer is not None
        files = [p for p in trace_files([self.config.resolved_trace_dir()])
                 if p != self._writer.path]
        records = list(watch_records_in(files))
        now = time.time()
        for armed in open_watches(records):
            record = armed.model_copy(update={'event': 'cancelled', 'stamp': now,
                                              'reason': RESTART_REASON})
            self._sink_watch(record)
            self.get_logger().warning(
                f'watch {armed.watch_id} ({armed.tool} when {armed.predicate}) of request '
                f'{armed.request_id} cancelled: {RESTART_REASON}'
            )

    def _fire_watch(self, watch: Watch) -> None:
        self.get_logger().info(
            f'watch {watch.watch_id} fired: {watch.reason}; running {watch.tool} '
            f'(request {watch.request_id})'
        )
        selection = Selection(
            request_id=watch.request_id,
            request_text=watch.request_text,
            tools=[watch.tool],
            scores=[1.0],
            fired_by=watch.watch_id,
        )
        accepted, reason = self._enqueue(selection, time.time())
        if not accepted:
            self.get_logger().error(f'watch {watch.watch_id} fired but {watch.tool} not run: '
                                    f'{reason}')

    def _sink_watch(self, record: WatchRecord) -> None:
        with self._sink_lock:
            try:
                if self._writer is not None:
                    self._writer.write(record)
            except (OSError, ToolRouterError) as exc:
                self.get_logger().error(f'cannot write watch record {record.watch_id}: {exc}')
        if record.event != 'fired':
            self.get_logger().info(
                f'watch {record.watch_id} {record.event}: {record.tool} when {record.predicate}'
                + (f' ({record.reason})' if record.reason else '')
            )
        try:
            self._watch_pub.publish(
                WatchEvent(
                    stamp=_stamp(record.stamp),
                    event=record.event,
                    watch_id=record.watch_id,
                    request_id=record.request_id,
                    tool=record.tool,
                    condition=record.condition,
                    predicate=record.predicate,
                    reason=record.reason,
                    record_json=record.model_dump_json(),
                )
            )
        except Exception as exc:  # noqa: BLE001 - context already shut down; the file has it
            self.get_logger().debug(f'watch event {record.watch_id} not published: {exc!r}')

    def _on_list_watches(
        self, request: ListWatches.Request, response: ListWatches.Response
    ) -> ListWatches.Response:
        watches = self.watches.snapshot(include_ended=bool(request.include_ended))
        response.watch_ids = [w.watch_id for w in watches]
        response.watches_json = json.dumps([watch_view(w) for w in watches])
        return response

    def _on_cancel_watch(
        self, request: CancelWatch.Request, response: CancelWatch.Response
    ) -> CancelWatch.Response:
        who = request.operator_name.strip() or '(unnamed)'
        cancelled = self.watches.cancel(
            request.watch_id, request.request_id, reason=f'cancelled by {who}'
        )
        response.cancelled = [w.watch_id for w in cancelled]
        response.success = bool(cancelled)
        target = request.watch_id or f'request {request.request_id!r}'
        response.message = (
            f'cancelled {", ".join(response.cancelled)}'
            if cancelled
            else f'no armed watch for {target or "(nothing given)"} (unknown or already ended)'
        )
        return response

    def _on_confirm(
        self, request: ConfirmTool.Request, response: ConfirmTool.Response
    ) -> ConfirmTool.Response:
        claimed = request.operator_name.strip() or '(unnamed)'
        if self.config.insecure_confirmations:
            operator_name = f'{claimed} (unsigned)'
        else:
            covered = [t for rid, t in self.book.pending()
                       if rid == request.request_id and (not request.tool or t == request.tool)]
            verdict = self.verifier.verify(
                request.request_id, request.tool, bool(request.approve), float(request.timestamp),
                request.nonce, request.key_id, request.signature, covered)
            if not verdict.ok:
                return self._refuse_confirmation(request, claimed, verdict.reason,
                                                 verdict.detail, response)
            operator_name = verdict.operator_name
        affected = self.book.resolve(
            request.request_id, request.tool, bool(request.approve), operator_name
        )
        response.affected_tools = affected
        response.success = bool(affected)
        verb = 'approved' if request.approve else 'denied'
        if affected:
            response.message = f'{verb} {", ".join(affected)} of {request.request_id}'
            self.get_logger().info(f'{operator_name} {response.message}')
        else:
            what = request.tool or 'any tool'
            response.message = (
                f'no pending confirmation for {what} of request '
                f'{request.request_id!r} (unknown, already decided or timed out)'
            )
        return response

    def _refuse_confirmation(self, request: ConfirmTool.Request, claimed: str, reason: str,
                             detail: str, response: ConfirmTool.Response) -> ConfirmTool.Response:
        """Trace a refused confirmation as a security event; it decides nothing."""
        record = SecurityRecord(
            stamp=time.time(), request_id=request.request_id[:200], tool=request.tool[:100],
            approve=bool(request.approve), claimed_operator=claimed[:100],
            key_id=request.key_id[:100], key_owner=self.verifier.owner(request.key_id),
            reason=reason, detail=detail)  # type: ignore[arg-type]
        self._write_security(record)
        self.get_logger().warning(
            f'SECURITY: refused confirmation of {request.tool or "every tool"} of request '
            f'{request.request_id!r} claimed by {claimed!r} (key {request.key_id!r}): '
            f'{reason}: {detail}')
        response.success = False
        response.affected_tools = []
        response.message = f'refused ({reason}): {detail}; nothing was approved or denied'
        return response

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        changed = {p.name: p.value for p in params if p.name in self._names}
        if not changed:
            return SetParametersResult(successful=True)
        fixed = sorted(set(changed) - LIVE_PARAMS)
        if fixed:
            return SetParametersResult(
                successful=False, reason=f'{", ".join(fixed)} need a restart'
            )
        merged = self.config.model_dump(mode='json')
        merged.update(changed)
        try:
            new = ExecutorConfig.model_validate(merged)
        except pydantic.ValidationError as exc:
            return SetParametersResult(successful=False, reason=first_error(exc))
        self.config = new
        p = self.pipeline
        p.mode, p.confirm_timeout_s = Mode(new.mode), new.confirm_timeout_s
        p.call_timeout_s, p.stop_on_failure = new.call_timeout_s, new.stop_on_failure
        self.watches.ttl_s = new.watch_ttl_s  # for watches armed from now on
        return SetParametersResult(successful=True)

    def destroy_node(self) -> None:
        """Stop cleanly, leaving a record for everything received.

        Cancel watches, trace queued selections as cancelled, interrupt confirmation
        waits, stop the workers (they finish their records), close the trace files.
        """
        if hasattr(self, '_watch_timer'):
            self._watch_timer.cancel()
            self.watches.cancel_all('executor shutdown: watches do not survive a restart')
        with self._queue_lock:
            self._closing = True
            queued = list(self._queued.values())
            self._queued.clear()
        for selection, received in queued:
            self._sink(
                self.pipeline.unprocessed(
                    selection, received, 'cancelled_at_shutdown',
                    'executor shut down before this selection was processed',
                )
            )
        if queued:
            self.get_logger().info(f'{len(queued)} queued selection(s) cancelled at shutdown')
        self.book.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        with self._sink_lock:
            if self._writer is not None:
                self._writer.close()
            if self._bag is not None:
                self._bag.close()
        if getattr(self, '_mavlink', None) is not None:
            self._mavlink.close()
        super().destroy_node()


def watch_view(w: Watch) -> dict[str, Any]:
    """A watch as the list service shows it."""
    return {
        'watch_id': w.watch_id,
        'request_id': w.request_id,
        'tool': w.tool,
        'condition': w.predicate.text,
        'predicate': w.predicate.describe(),
        'state': w.state,
        'armed_at': w.armed_at,
        'expires_at': w.expires_at,
        'samples': w.samples,
        'value': w.value,
        'last_error': w.last_error,
        'reason': w.reason,
    }


def main(args: list[str] | None = None) -> int:
    """Run the executor node until Ctrl-C."""
    return spin(ExecutorNode, args, threads=4)


if __name__ == '__main__':
    raise SystemExit(main())
