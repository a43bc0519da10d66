"""The executor node: ROS glue over the pure executor (intake, pipeline, desk, sink).

* subscribes to SelectedCapabilities (``tool_router/selected``) and hands each selection to
  :class:`~tool_router.executor.intake.Intake` (signatures, queue, write-ahead ``received``
  event), then publishes its ack on ``executor/acks``; workers run the
  :class:`~tool_router.executor.pipeline.ExecutionPipeline`;
* announces ``confirm`` tools on ``executor/confirmation_requests`` (transient local) and the
  waiting ones on ``executor/pending_confirmations`` (``PendingConfirmations``); decisions come
  on the ``executor/confirm`` service and go to the :class:`~tool_router.executor.desk.Desk`;
* calls std_srvs Trigger / SetBool and tool_router ToolCall services (the tool with its
  arguments from the request) with ``call_async`` and a deadline, or publishes
  std_msgs/String, as configured in ``bindings`` (:class:`RosDispatcher`);
* runs the condition watches (:mod:`tool_router.executor.watches`) on a timer; events on
  ``executor/watch_events`` (``WatchEvent``, transient local), services
  ``executor/list_watches`` (``WatchState[]``) and ``executor/cancel_watch``;
* every record goes through the :class:`~tool_router.executor.sink.TraceSink` (JSONL, fsync'd)
  and, once written, final records are published on ``executor/traces``.

All names are relative, so ``-r __ns:=/uav1`` moves every one of them.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pydantic
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from tool_router.common import signing
from tool_router.common.catalog import load_catalog
from tool_router.common.errors import ConfigError, ToolRouterError, first_error
from tool_router.common.places import load_places
from tool_router.executor.auth import ConfirmationVerifier, SecurityRecord
from tool_router.executor.chain import load_or_create_chain_key
from tool_router.executor.config import (EXECUTOR_DOORS, ExecutorConfig, load_executor_config,
                                         start_parameters)
from tool_router.executor.confirmations import ConfirmationBook
from tool_router.executor.desk import CancelCall, ConfirmCall, Desk
from tool_router.executor.arguments import ArgumentError
from tool_router.executor.dispatch import (Binding, BindingKind, DispatchResult, call_arguments,
                                           setbool_value)
from tool_router.executor.intake import Ack, Intake, IntakeRules, Signatures
from tool_router.executor.nonces import NonceStore
from tool_router.executor.permissions import PermissionPolicy, load_permissions
from tool_router.executor.pipeline import ConfirmRequest, ExecutionPipeline, Selection
from tool_router.executor.sampling import BindingSampler, Sampler, TextSampler
from tool_router.executor.sink import TraceSink
from tool_router.executor.story import confirm_hint
from tool_router.executor.traces import (ConfirmationOutcome, Redactor, TraceRecord, TraceWriter,
                                         WatchRecord, restart_cancellations, trace_files)
from tool_router.executor.watches import Watch, WatchManager
from tool_router.msg import (ConfirmationRequest, ExecutionTrace, PendingConfirmations,
                             SelectedCapabilities, SelectionAck, WatchEvent)
from tool_router.ros.common import (ack_qos, declare_from_dict, declare_open, flatten, latched,
                                    level_logger, parameter_descriptions, parameters_as_dict,
                                    refuse_fixed, spin, startup_problem)
from tool_router.ros.convert import (pending_msg, selection_from_msg, trace_msg,
                                     watch_event_msg, watch_state_msg)
from tool_router.ros.telemetry import TelemetryPublisher
from tool_router.srv import CancelWatch, ConfirmTool, ListWatches, ToolCall

RESTART_REASON = 'executor restarted: watches do not survive a restart'


class RosDispatcher:
    """Calls Trigger / SetBool / ToolCall services and publishes String messages (deadlines)."""

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
                binding.kind in SERVICE_TYPES
                and key not in self._clients
            ):
                srv = SERVICE_TYPES[binding.kind]
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
        request: Any = None
        if binding.kind is BindingKind.CALL:
            try:
                request = tool_call_request(tool, binding, request_id, request_text)
            except ArgumentError as exc:
                return DispatchResult(False, f'refused, nothing sent: {exc.what}'
                                      + (f' ({exc.hint})' if exc.hint else ''),
                                      'missing_argument')
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
        name = self._node.resolve_service_name(client.srv_name)
        servers = self._node.count_services(name)
        if servers > 1:  # a second process answers on the vehicle's name: whose answer is it?
            return DispatchResult(
                False, f'{servers} servers offer {name}: not called (another process '
                'answers on the vehicle\'s service; docs/SECURITY.md, "A second server")',
                'endpoint_ambiguous')
        if binding.kind is BindingKind.SETBOOL:
            request = SetBool.Request(data=setbool_value(binding, request_text))
        elif binding.kind is BindingKind.TRIGGER:
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
        failed = getattr(response, 'failure_mode', '') or 'call_failed'  # ToolCall says why
        return DispatchResult(
            bool(response.success), response.message, '' if response.success else failed
        )


SERVICE_TYPES: dict[BindingKind, Any] = {BindingKind.TRIGGER: Trigger,
                                         BindingKind.SETBOOL: SetBool,
                                         BindingKind.CALL: ToolCall}


def tool_call_request(tool: str, binding: Binding, request_id: str,
                      request_text: str) -> Any:
    """The ToolCall request of a ``call:`` binding (ArgumentError: a required value missing)."""
    values = call_arguments(tool, binding, request_text)
    return ToolCall.Request(tool=tool, request_id=request_id, given=sorted(values), **values)


class RosConfirmer:
    """Announces confirmation requests on a topic and waits on the ConfirmationBook."""

    def __init__(self, node: 'ExecutorNode', book: ConfirmationBook, publisher: Any) -> None:
        self._node = node
        self._book = book
        self._pub = publisher

    def confirm(self, requests: list[ConfirmRequest]) -> dict[str, ConfirmationOutcome]:
        """Open, announce, then wait for every request until one shared deadline."""
        entries = [(r, self._book.open(r.request_id, r.tool, r.risk, r.timeout_s))
                   for r in requests]
        deadline = time.monotonic() + max(r.timeout_s for r in requests)
        for r, _ in entries:
            self._pub.publish(
                ConfirmationRequest(
                    stamp=self._node.get_clock().now().to_msg(),
                    request_id=r.request_id,
                    tool=r.tool,
                    risk=r.risk,
                    request_text=r.request_text,
                    timeout_s=float(r.timeout_s),
                )
            )
            hint = confirm_hint(r.request_id, r.tool, self._node.get_namespace())
            self._node.get_logger().info(
                f'waiting {r.timeout_s:g} s for confirmation of {r.tool} (request {r.request_id})'
                f': {hint} (or --deny)'
            )
        return {r.tool: self._book.wait(entry, deadline) for r, entry in entries}


DIAGNOSTICS_PERIOD_S = 1.0  # the executor's /diagnostics and trace-backlog flush period
TELEMETRY_PERIOD_S = 0.25  # the MAVLink link's vehicle/* topics (4 Hz)
LEVELS = {'OK': DiagnosticStatus.OK, 'WARN': DiagnosticStatus.WARN,
          'ERROR': DiagnosticStatus.ERROR}


def diagnostic_status(name: str, level: str, message: str,
                      values: dict[str, str]) -> DiagnosticStatus:
    """One /diagnostics status of the executor (level 'OK', 'WARN' or 'ERROR')."""
    return DiagnosticStatus(name=name, hardware_id='tool_router', message=message,
                            level=LEVELS.get(level, DiagnosticStatus.ERROR),
                            values=[KeyValue(key=k, value=v) for k, v in values.items()])


class ExecutorNode(Node):
    """ROS glue: parameters, topics, services. The decisions live in the pure core.

    A selection's walk: :meth:`_on_selection` converts the message
    (:func:`~tool_router.ros.convert.selection_from_msg`), the
    :class:`~tool_router.executor.intake.Intake` checks, records and queues it and returns the
    ack this node publishes; a worker runs :meth:`Intake.run`, the
    :class:`~tool_router.executor.pipeline.ExecutionPipeline` decides, confirms and dispatches,
    and the :class:`~tool_router.executor.sink.TraceSink` writes each record and hands it back
    here only to be published. Confirmations and watch cancellations go to the
    :class:`~tool_router.executor.desk.Desk`.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('executor_node', **kwargs)
        self._pool: ThreadPoolExecutor | None = None
        self._urgent: list[threading.Thread] = []  # emergency stops' own runners
        self._urgent_lock = threading.Lock()
        self._sink: TraceSink | None = None
        self._pending_pub: Any = None
        self._closing = False  # set by destroy_node: the link reporter thread stops
        self.book = ConfirmationBook(on_change=self._publish_pending)
        self._error = ''
        self._log = level_logger(self)
        self._names: list[str] = []
        try:
            defaults = load_executor_config().model_dump(mode='json')
            declare_from_dict(self, defaults, parameter_descriptions(ExecutorConfig),
                              EXECUTOR_DOORS)
            # unknown names refused (moda:=shadow), bindings of a custom catalog's tools declared
            self._names = start_parameters(flatten(defaults), self._parameter_overrides)
            declare_open(self, self._names, EXECUTOR_DOORS)
            # nothing is writable at run time: a change needs a restart (docs/SECURITY.md)
            self.add_on_set_parameters_callback(refuse_fixed(EXECUTOR_DOORS))
            self._build()
        except (ParameterException, ToolRouterError, pydantic.ValidationError, OSError) as exc:
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
        self.config = c = ExecutorConfig.model_validate(parameters_as_dict(self, self._names))
        ns = self.get_namespace()  # in every record; its own trace subdirectory by default
        catalog = load_catalog(c.resolved_catalog())
        rules = load_permissions(c.resolved_permissions(), catalog)
        places = load_places(c.places_file or None)
        risks = {t.name: t.risk.value for t in catalog.tools}
        self.verifier = ConfirmationVerifier.from_file(
            c.resolved_operators(), lambda tool: risks.get(tool, 'critical'), c.confirm_max_age_s,
            nonces=NonceStore(c.resolved_nonce_file(ns), c.nonce_window_s(), fsync=c.trace_fsync))
        chain_key = load_or_create_chain_key(c.resolved_chain_key()) if c.trace_chain else None
        # signs every ack, so the router can tell ours from a forged one (docs/SECURITY.md)
        self._ack_key = signing.router_key(c.resolved_executor_key(), create=True)
        writer = TraceWriter(c.resolved_trace_dir(ns), c.trace_max_bytes, fsync=c.trace_fsync,
                             chain_key=chain_key, namespace=ns)
        bag = None
        if c.trace_mcap:
            from tool_router.executor.bag import McapTraceBag

            bag = McapTraceBag(c.resolved_trace_dir(ns), c.trace_topic)
        # transient local: `tool-router call` subscribes before it sends and still gets a
        # record published before its reader matched (volatile readers, trace tail, get
        # only new ones)
        self._trace_pub = self.create_publisher(ExecutionTrace, c.trace_topic, latched(50))
        self._watch_pub = self.create_publisher(WatchEvent, c.watch_events_topic, latched(50))
        self._sink = TraceSink(writer, bag, on_record=self._publish_record,
                               on_watch=self._publish_watch, log=self._log)
        bindings = c.parsed_bindings()
        unbound = [t for t in catalog.names if t not in bindings]
        if unbound:
            self.get_logger().warning(f'no binding for {", ".join(unbound)}: they will fail')
        self.book.max_pending_per_tool = c.max_pending_confirmations_per_tool
        self._confirm_pub = self.create_publisher(
            ConfirmationRequest, c.confirmation_topic, latched(c.confirmation_history)
        )
        self._pending_pub = self.create_publisher(PendingConfirmations, c.pending_topic,
                                                  latched(1))
        self._ack_pub = self.create_publisher(SelectionAck, c.ack_topic, ack_qos())
        dispatcher: Any = RosDispatcher(self, bindings)
        self._mavlink: Any = None
        sampler: Sampler = TextSampler(dispatcher, bindings, c.call_timeout_s)
        if c.uses_mavlink():
            dispatcher, sampler = self._open_mavlink(c, dispatcher, sampler, bindings)
        self.watches = WatchManager(sampler, self._fire_watch, self._sink.watch,
                                    ttl_s=c.watch_ttl_s, max_watches=c.max_watches)
        for record in restart_cancellations(  # this namespace's watches only
                [p for p in trace_files([writer.directory]) if p != writer.path],
                time.time(), RESTART_REASON, namespace=ns):
            self._sink.watch(record)
        self.pipeline = ExecutionPipeline(
            catalog, PermissionPolicy(rules, catalog), bindings,
            RosConfirmer(self, self.book, self._confirm_pub), dispatcher,
            mode=c.mode, confirm_timeout_s=c.confirm_timeout_s, call_timeout_s=c.call_timeout_s,
            stop_on_failure=c.stop_on_failure,
            redactor=Redactor(c.redact.enabled, c.redact.digits, c.redact.coordinates,
                              c.redact.name_list),
            watches=self.watches, journal=self._sink.event, places=places)
        self._pool = ThreadPoolExecutor(max_workers=c.max_parallel_requests,
                                        thread_name_prefix='executor-request')
        self.intake = Intake(
            self.pipeline, self.verifier, self._sink, self._submit,
            lambda: signing.router_key(c.resolved_router_key()),
            IntakeRules(require_router_signature=c.require_router_signature,
                        require_signed_execute=c.require_signed_execute,
                        execute_max_age_s=c.execute_max_age_s, max_queue=c.max_queue,
                        max_selection_age_s=c.max_selection_age_s),
            log=self._log)
        self.desk = Desk(self.book, self.verifier, self.watches, self._sink.security,
                         insecure_confirmations=c.insecure_confirmations, log=self._log)
        self._confirm_srv = self.create_service(
            ConfirmTool, c.confirm_service, self._on_confirm,
            callback_group=MutuallyExclusiveCallbackGroup())
        self._sub = self.create_subscription(
            SelectedCapabilities, c.selection_topic, self._on_selection, 50,
            callback_group=MutuallyExclusiveCallbackGroup())
        watch_group = MutuallyExclusiveCallbackGroup()
        self._list_srv = self.create_service(
            ListWatches, c.list_watches_service, self._on_list_watches, callback_group=watch_group)
        self._cancel_srv = self.create_service(
            CancelWatch, c.cancel_watch_service, self._on_cancel_watch,
            callback_group=watch_group)
        self._watch_timer = self.create_timer(
            c.watch_period_s, self.watches.tick, callback_group=MutuallyExclusiveCallbackGroup())
        # once a second: write what a full disk left in memory, and say so on /diagnostics
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._health_timer = self.create_timer(
            DIAGNOSTICS_PERIOD_S, self._publish_health,
            callback_group=MutuallyExclusiveCallbackGroup())
        self._announce_confirmation_security()
        self._announce_execute_security()
        self._publish_pending()
        self.get_logger().info(
            f'executor ready: mode {c.mode.value}, {len(bindings)} bindings, listening on '
            f'{c.selection_topic}, traces -> {writer.path}'
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
            self._mavlink = MavlinkLink(c.mavlink, on_event=self.get_logger().info,
                                        on_security=self._mavlink_refused)
        except (OSError, ValueError) as exc:
            raise ConfigError(f'MAVLink {c.mavlink.connection}: {exc}') from None
        signing = ('signed, unsigned messages refused' if c.mavlink.require_signed else
                   'signed' if c.mavlink.signing_key_file else 'unsigned')
        self.get_logger().info(
            f'MAVLink link on {c.mavlink.connection} (vehicle {c.mavlink.target_system}/'
            f'{c.mavlink.target_component}, autopilot {c.mavlink.autopilot}, {signing})'
        )
        threading.Thread(target=self._report_vehicle_link, name='mavlink-link-log',
                         daemon=True).start()
        sampler = BindingSampler(bindings, ros_sampler,
                                 {BindingKind.MAVLINK: MavlinkSampler(self._mavlink)})
        # the autopilot's telemetry as standard messages under vehicle/ (ros/telemetry.py)
        self._vehicle_topics = TelemetryPublisher(self, 'vehicle')
        self._telemetry_timer = self.create_timer(
            TELEMETRY_PERIOD_S, self._publish_telemetry,
            callback_group=MutuallyExclusiveCallbackGroup())
        return KindRouter(MavlinkDispatcher(self._mavlink), ros_dispatcher), sampler

    def _publish_telemetry(self) -> None:
        from tool_router.executor.mavlink_telemetry import link_telemetry

        try:
            self._vehicle_topics.publish(link_telemetry(self._mavlink))
        except Exception as exc:  # noqa: BLE001 - context shutting down
            self.get_logger().debug(f'telemetry not published: {exc!r}')

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
        log.info(f'vehicle heartbeat seen (system {link.config.target_system}): '
                 f'{link.describe()}')

    def _mavlink_refused(self, event: dict[str, Any]) -> None:
        """MAVLink messages dropped for their signature: a security record (rate-limited)."""
        self.get_logger().warning(
            f"MAVLink: refused {event['count']} {event['message']} from system "
            f"{event['system']} component {event['component']} ({event['reason']})")
        if self._sink is None:
            return
        self._sink.security(SecurityRecord(
            event='mavlink_refused', stamp=time.time(), request_id='', tool=event['message'],
            claimed_operator='', key_id=f"system {event['system']} component "
                                        f"{event['component']}",
            reason=event['reason'] if event['reason'] in ('unsigned', 'bad_signature', 'stale',
                                                          'replayed') else 'malformed',
            detail=f"{event['count']} {event['message']} message(s) without a valid MAVLink 2 "
                   'signature dropped (mavlink.require_signed)'))

    # -- callbacks ---------------------------------------------------------
    def _on_selection(self, msg: SelectedCapabilities) -> None:
        try:
            selection = selection_from_msg(msg)
        except pydantic.ValidationError as exc:
            self.get_logger().error(f'unusable selection {msg.request_id!r}: {first_error(exc)}')
            return
        signatures = Signatures(router_signature=msg.router_signature,
                                policy=msg.requested_policy,
                                max_tools=int(msg.requested_max_tools), key_id=msg.key_id,
                                timestamp=float(msg.timestamp), nonce=msg.nonce,
                                signature=msg.signature)
        self._ack(self.intake.accept(selection, signatures), msg.router_signature)

    def _submit(self, ticket: int, urgent: bool) -> None:
        """Hand a ticket to a worker; an emergency stop gets its own thread, never a queue."""
        if urgent:
            runner = threading.Thread(target=self.intake.run, args=(ticket,),
                                      name='executor-emergency', daemon=True)
            with self._urgent_lock:
                self._urgent = [t for t in self._urgent if t.is_alive()] + [runner]
            runner.start()
        elif self._pool is not None:
            self._pool.submit(self.intake.run, ticket)

    def _ack(self, ack: Ack, selection_signature: str) -> None:
        if not ack.publish:  # a refusal over the flood budget (Intake rule 7)
            return
        try:
            msg = SelectionAck(stamp=self._stamp(), request_id=ack.request_id,
                               accepted=ack.accepted, reason=ack.reason,
                               selection_signature=selection_signature)
            msg.signature = signing.ack_signature(msg, self._ack_key)
            self._ack_pub.publish(msg)
        except Exception as exc:  # noqa: BLE001 - context shut down; the trace has it
            self.get_logger().debug(f'ack {ack.request_id} not published: {exc!r}')

    def _publish_pending(self) -> None:
        """The confirmations still waiting, for operator UIs (latched for late joiners)."""
        if self._pending_pub is None:
            return
        try:
            self._pending_pub.publish(pending_msg(self.book.pending_entries(), self.book.now(),
                                                  self._stamp()))
        except Exception as exc:  # noqa: BLE001 - context already shut down
            self.get_logger().debug(f'pending list not published: {exc!r}')

    def _publish_record(self, record: TraceRecord) -> None:
        try:
            self._trace_pub.publish(trace_msg(record))
        except Exception as exc:  # noqa: BLE001 - context already shut down; the file has it
            self.get_logger().debug(f'trace {record.request_id} not published: {exc!r}')

    def _publish_watch(self, record: WatchRecord) -> None:
        if record.event != 'fired':
            self.get_logger().info(
                f'watch {record.watch_id} {record.event}: {record.tool} when {record.predicate}'
                + (f' ({record.reason})' if record.reason else ''))
        try:
            self._watch_pub.publish(watch_event_msg(record))
        except Exception as exc:  # noqa: BLE001 - context already shut down; the file has it
            self.get_logger().debug(f'watch event {record.watch_id} not published: {exc!r}')

    def _publish_health(self) -> None:
        """Flush the trace backlog; publish the executor's state on /diagnostics."""
        if self._sink is None:
            return
        self.intake.tick()  # a flood window's summary record
        health = self._sink.flush()
        level, message = health.status()
        values = {
            'trace_on_disk': str(health.on_disk).lower(), 'trace_backlog': str(health.backlog),
            'trace_dropped': str(health.dropped), 'trace_error': health.error,
            'queued_selections': str(self.intake.waiting),
            'watches_armed': str(len(self.watches.armed())),
            'pending_confirmations': str(len(self.book.pending())),
            'mode': self.config.mode.value,
        }
        statuses = [diagnostic_status(f'tool_router: executor {self.get_fully_qualified_name()}',
                                      level, message, values)]
        if self._mavlink is not None:
            from tool_router.executor.mavlink_telemetry import link_health

            link = link_health(self._mavlink)
            statuses.append(diagnostic_status(
                f'tool_router: mavlink link {self.get_fully_qualified_name()}', link.level,
                link.message, link.values))
        msg = DiagnosticArray(status=statuses)
        msg.header.stamp = self.get_clock().now().to_msg()
        try:
            self._diag_pub.publish(msg)
        except Exception as exc:  # noqa: BLE001 - context shutting down
            self.get_logger().debug(f'diagnostics not published: {exc!r}')

    def _stamp(self) -> Any:
        """A message stamp from the node's clock (simulated time under use_sim_time)."""
        return self.get_clock().now().to_msg()

    def _fire_watch(self, watch: Watch) -> bool:
        self.get_logger().info(
            f'watch {watch.watch_id} fired: {watch.reason}; running {watch.tool} '
            f'(request {watch.request_id})')
        ack = self.intake.fire(Selection.of(watch.request_id, [watch.tool],
                                            request_text=watch.request_text,
                                            fired_by=watch.watch_id))
        if not ack.accepted:
            self.get_logger().error(f'watch {watch.watch_id} fired but {watch.tool} not run: '
                                    f'{ack.reason}; armed again')
        return ack.accepted

    def _on_list_watches(
        self, request: ListWatches.Request, response: ListWatches.Response
    ) -> ListWatches.Response:
        watches = self.watches.snapshot(include_ended=bool(request.include_ended))
        response.watches = [watch_state_msg(w) for w in watches]
        return response

    def _on_cancel_watch(
        self, request: CancelWatch.Request, response: CancelWatch.Response
    ) -> CancelWatch.Response:
        answer = self.desk.cancel_watch(CancelCall(
            watch_id=request.watch_id, request_id=request.request_id,
            operator_name=request.operator_name, key_id=request.key_id,
            timestamp=float(request.timestamp), nonce=request.nonce,
            signature=request.signature))
        response.success, response.message = answer.success, answer.message
        response.cancelled = list(answer.affected)
        return response

    def _on_confirm(
        self, request: ConfirmTool.Request, response: ConfirmTool.Response
    ) -> ConfirmTool.Response:
        answer = self.desk.confirm(ConfirmCall(
            request_id=request.request_id, tool=request.tool, approve=bool(request.approve),
            operator_name=request.operator_name, key_id=request.key_id,
            timestamp=float(request.timestamp), nonce=request.nonce,
            signature=request.signature))
        response.success, response.message = answer.success, answer.message
        response.affected_tools = list(answer.affected)
        return response

    def destroy_node(self) -> None:
        """Stop cleanly, leaving a record for everything received.

        Cancel watches, trace queued selections as cancelled, interrupt confirmation
        waits, stop the workers (they finish their records), close the trace files.
        """
        self._closing = True
        if hasattr(self, '_watch_timer'):
            self._watch_timer.cancel()
            self.watches.cancel_all('executor shutdown: watches do not survive a restart')
        if hasattr(self, 'intake'):
            self.intake.shutdown()
        self.book.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        with self._urgent_lock:
            urgent, self._urgent = self._urgent, []
        for runner in urgent:  # an emergency stop's record is written before the files close
            runner.join(timeout=30.0)
        if self._sink is not None:
            self._sink.close()
        if getattr(self, '_mavlink', None) is not None:
            self._mavlink.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Run the executor node until Ctrl-C."""
    return spin(ExecutorNode, args, threads=4)


if __name__ == '__main__':
    raise SystemExit(main())
