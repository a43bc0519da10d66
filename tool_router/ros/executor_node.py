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
  std_msgs/String, as configured in ``bindings``
  (:class:`~tool_router.ros.executor_io.RosDispatcher`);
* publishes the autopilot's telemetry under ``vehicle/`` with MAVLink bindings
  (:mod:`tool_router.ros.telemetry`) and its own and the link's state on ``/diagnostics``;
* runs the condition watches (:mod:`tool_router.executor.watches`) on a timer; events on
  ``executor/watch_events`` (``WatchEvent``, transient local), services
  ``executor/list_watches`` (``WatchState[]``) and ``executor/cancel_watch``;
* every record goes through the :class:`~tool_router.executor.sink.TraceSink` (JSONL, fsync'd)
  and, once written, final records are published on ``executor/traces``.

A lifecycle node (:class:`ExecutorNode`); all names are relative, so ``-r __ns:=/uav1``
moves every one of them.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pydantic
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.exceptions import ParameterException
from rclpy.lifecycle import LifecycleNode, State, TransitionCallbackReturn
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.timer import Timer

from tool_router.common import signing
from tool_router.common.catalog import Kind, load_catalog
from tool_router.common.errors import ConfigError, ToolRouterError, first_error
from tool_router.common.places import load_places
from tool_router.executor.auth import ConfirmationVerifier, SecurityRecord
from tool_router.executor.chain import load_or_create_chain_key
from tool_router.common.param_doors import flatten
from tool_router.executor.config import (EXECUTOR_DOORS, ExecutorConfig, load_executor_config,
                                         start_parameters)
from tool_router.executor.confirmations import ConfirmationBook
from tool_router.executor.desk import CancelCall, ConfirmCall, Desk
from tool_router.executor.dispatch import Binding, BindingKind
from tool_router.executor.intake import Ack, Intake, IntakeRules, Signatures
from tool_router.common.nonces import NonceStore
from tool_router.executor.permissions import PermissionPolicy, load_permissions
from tool_router.executor.pipeline import ExecutionPipeline, Selection
from tool_router.executor.sampling import BindingSampler, Sampler, TextSampler
from tool_router.executor.sink import TraceSink
from tool_router.executor.traces import (Redactor, TraceRecord, TraceWriter, WatchRecord,
                                         restart_cancellations, trace_files)
from tool_router.executor.watches import Watch, WatchManager
from tool_router.msg import (ConfirmationRequest, ExecutionTrace, PendingConfirmations,
                             SelectedCapabilities, SelectionAck, WatchEvent)
from tool_router.ros.common import (ack_qos, declare_from_dict, declare_open, latched,
                                    level_logger, parameter_descriptions, parameters_as_dict,
                                    refuse_fixed, spin, startup_problem, take_waiting)
from tool_router.ros.convert import (pending_msg, selection_from_msg, trace_msg,
                                     watch_event_msg, watch_state_msg)
from tool_router.ros.executor_io import RosConfirmer, RosDispatcher
from tool_router.ros.telemetry import TelemetryPublisher
from tool_router.srv import CancelWatch, ConfirmTool, ListWatches

RESTART_REASON = 'executor restarted: watches do not survive a restart'


DIAGNOSTICS_PERIOD_S = 1.0  # the executor's /diagnostics and trace-backlog flush period
TELEMETRY_PERIOD_S = 0.25  # the MAVLink link's vehicle/* topics (4 Hz)
# the selection reader's history, and the most selections one callback takes (the rest wait
# for the next callback, so a flood cannot hold the selection callback forever)
SELECTION_DEPTH = 50
LEVELS = {'OK': DiagnosticStatus.OK, 'WARN': DiagnosticStatus.WARN,
          'ERROR': DiagnosticStatus.ERROR}


def diagnostic_status(name: str, level: str, message: str,
                      values: dict[str, str]) -> DiagnosticStatus:
    """One /diagnostics status of the executor (level 'OK', 'WARN' or 'ERROR')."""
    return DiagnosticStatus(name=name, hardware_id='tool_router', message=message,
                            level=LEVELS.get(level, DiagnosticStatus.ERROR),
                            values=[KeyValue(key=k, value=v) for k, v in values.items()])


class ExecutorNode(LifecycleNode):
    """ROS glue: parameters, topics, services. The decisions live in the pure core.

    A lifecycle (managed) node, as the router is: ``configure`` reads the parameters, loads
    the catalog, permissions, operators' and signing keys, opens the traces and creates the
    publishers (nothing is taken yet); ``activate`` opens the vehicle link (MAVLink), builds
    the pipeline and starts taking selections, confirmations and watch requests;
    ``deactivate`` stops taking them (queued selections traced as cancelled, watches
    cancelled, the link closed); ``cleanup`` closes the traces. With ``autostart`` (default
    true) it configures and activates itself, since a plain ``ros2 run`` has no lifecycle
    manager.

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
        self._mavlink: Any = None
        self._dispatcher: RosDispatcher | None = None
        self._active = False
        self._closing = False  # set at deactivation: the link reporter thread stops
        self._autostarting = False
        self._activity: list[Any] = []  # what activate created: (entity, destroy) pairs
        self.book = ConfirmationBook(on_change=self._publish_pending)
        self._error = ''
        self._log = level_logger(self)
        self._names: list[str] = []
        self.declare_parameter('autostart', True, ParameterDescriptor(
            description='Configure and activate at start (no lifecycle manager needed).',
            read_only=True, additional_constraints=EXECUTOR_DOORS.descriptor_note('autostart')))
        try:
            defaults = load_executor_config().model_dump(mode='json')
            declare_from_dict(self, defaults, parameter_descriptions(ExecutorConfig),
                              EXECUTOR_DOORS)
            # unknown names refused (moda:=shadow), bindings of a custom catalog's tools declared
            self._names = start_parameters(flatten(defaults), self._parameter_overrides)
            declare_open(self, self._names, EXECUTOR_DOORS)
            # nothing is writable at run time: a change needs a restart (docs/SECURITY.md)
            self.add_on_set_parameters_callback(refuse_fixed(EXECUTOR_DOORS))
        except (ParameterException, ToolRouterError, pydantic.ValidationError, OSError) as exc:
            self._error = startup_problem(exc)

    # -- lifecycle ---------------------------------------------------------
    def startup(self) -> bool:
        """Configure and activate when ``autostart`` is set; False after one fatal line.

        False when the parameters are wrong or a transition failed;
        :func:`~tool_router.ros.common.spin` then exits with status 1, as the router
        node does when its configuration fails: one clear line, no traceback.
        """
        if self._error:
            self.get_logger().fatal(f'cannot start: {self._error}')
            return False
        if not self.get_parameter('autostart').value:
            self.get_logger().info('waiting for lifecycle transitions (autostart is false)')
            return True
        self._autostarting = True  # the failure is logged once, here
        try:
            ok = (self.trigger_configure() == TransitionCallbackReturn.SUCCESS
                  and self.trigger_activate() == TransitionCallbackReturn.SUCCESS)
        finally:
            self._autostarting = False
        if not ok:
            self.get_logger().fatal(f'cannot start: {self._error}')
        return ok

    def _failed(self, exc: BaseException, stage: str) -> TransitionCallbackReturn:
        """Keep the reason for :meth:`startup`; log it when driven by a lifecycle manager."""
        self._error = startup_problem(exc)
        if not self._autostarting:
            self.get_logger().error(f'cannot {stage}: {self._error}')
        return TransitionCallbackReturn.FAILURE

    def on_configure(self, state: State) -> TransitionCallbackReturn:
        """Parameters, catalog, keys, traces and publishers; FAILURE with one line on bad input."""
        if self._error:
            return self._failed(ConfigError(self._error), 'configure')
        try:
            self._configure()
        except (ToolRouterError, pydantic.ValidationError, OSError) as exc:
            self._close_traces()
            return self._failed(exc, 'configure')
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: State) -> TransitionCallbackReturn:
        """Open the vehicle link and start taking selections."""
        try:
            self._activate()
        except (ToolRouterError, pydantic.ValidationError, OSError) as exc:
            self._deactivate('activation failed')
            return self._failed(exc, 'activate')
        return super().on_activate(state)

    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        """Stop taking selections; what is queued is traced, watches cancelled, link closed."""
        self._deactivate('executor deactivated: watches do not survive a deactivation')
        self.get_logger().info('executor deactivated: selections are not taken')
        return super().on_deactivate(state)

    def on_cleanup(self, state: State) -> TransitionCallbackReturn:
        """Close the traces and drop the publishers."""
        self._close_traces()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: State) -> TransitionCallbackReturn:
        """Stop everything, leaving a record for everything received."""
        self._deactivate('executor shutdown: watches do not survive a restart')
        self._close_traces()
        return TransitionCallbackReturn.SUCCESS

    def _configure(self) -> None:
        """Read the parameters, open the traces, create the publishers.

        Raises ToolRouterError, ValidationError or OSError on bad input.
        """
        self.config = c = ExecutorConfig.model_validate(parameters_as_dict(self, self._names))
        ns = self.get_namespace()  # in every record; its own trace subdirectory by default
        self._catalog = catalog = load_catalog(c.resolved_catalog())
        self._rules = load_permissions(c.resolved_permissions(), catalog)
        self._places = load_places(c.places_file or None)
        risks = {t.name: t.risk.value for t in catalog.tools}
        self.verifier = ConfirmationVerifier.from_file(
            c.resolved_operators(), lambda tool: risks.get(tool, 'critical'), c.confirm_max_age_s,
            nonces=NonceStore(c.resolved_nonce_file(ns), c.nonce_window_s(), fsync=c.trace_fsync))
        chain_key = load_or_create_chain_key(c.resolved_chain_key()) if c.trace_chain else None
        # signs every ack, so the router can tell ours from a forged one (docs/SECURITY.md)
        self._ack_key = signing.router_key(c.resolved_executor_key(), create=True)
        self._bindings = c.parsed_bindings()
        self._writer = writer = TraceWriter(c.resolved_trace_dir(ns), c.trace_max_bytes,
                                            fsync=c.trace_fsync, chain_key=chain_key,
                                            namespace=ns)
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
        for record in restart_cancellations(  # this namespace's watches only
                [p for p in trace_files([writer.directory]) if p != writer.path],
                time.time(), RESTART_REASON, namespace=ns):
            self._sink.watch(record)
        unbound = [t for t in catalog.names if t not in self._bindings]
        if unbound:
            self.get_logger().warning(f'no binding for {", ".join(unbound)}: they will fail')
        self._confirm_pub = self.create_publisher(
            ConfirmationRequest, c.confirmation_topic, latched(c.confirmation_history)
        )
        self._pending_pub = self.create_publisher(PendingConfirmations, c.pending_topic,
                                                  latched(1))
        self._ack_pub = self.create_publisher(SelectionAck, c.ack_topic, ack_qos())
        # once a second: write what a full disk left in memory, and say so on /diagnostics
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._health_timer = self.create_timer(
            DIAGNOSTICS_PERIOD_S, self._publish_health,
            callback_group=MutuallyExclusiveCallbackGroup())
        self._announce_confirmation_security()
        self._announce_execute_security()
        self.get_logger().info(f'executor configured: mode {c.mode.value}, '
                               f'{len(self._bindings)} bindings, traces -> {writer.path}')

    def _activate(self) -> None:
        """Open the vehicle link, build the pipeline, take selections, confirmations, watches."""
        c, bindings = self.config, self._bindings
        assert self._sink is not None  # configured
        self._closing = False
        self.book = ConfirmationBook(on_change=self._publish_pending)
        self.book.max_pending_per_tool = c.max_pending_confirmations_per_tool
        reads = frozenset(t.name for t in self._catalog.tools if t.kind is Kind.SENSOR)
        self._dispatcher = RosDispatcher(self, bindings, self._ack_key, resend=reads)
        dispatcher: Any = self._dispatcher
        sampler: Sampler = TextSampler(dispatcher, bindings, c.call_timeout_s)
        if c.uses_mavlink():
            dispatcher, sampler = self._open_mavlink(c, dispatcher, sampler, bindings)
        self.watches = WatchManager(sampler, self._fire_watch, self._sink.watch,
                                    ttl_s=c.watch_ttl_s, max_watches=c.max_watches)
        self.pipeline = ExecutionPipeline(
            self._catalog, PermissionPolicy(self._rules, self._catalog), bindings,
            RosConfirmer(self, self.book, self._confirm_pub), dispatcher,
            mode=c.mode, confirm_timeout_s=c.confirm_timeout_s, call_timeout_s=c.call_timeout_s,
            stop_on_failure=c.stop_on_failure,
            redactor=Redactor(c.redact.enabled, c.redact.digits, c.redact.coordinates,
                              c.redact.name_list),
            watches=self.watches, journal=self._sink.event, places=self._places)
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
        watch_group = MutuallyExclusiveCallbackGroup()
        self._selections = self.create_subscription(
            SelectedCapabilities, c.selection_topic, self._on_selection,
            QoSProfile(depth=SELECTION_DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT),
            callback_group=MutuallyExclusiveCallbackGroup())
        self._activity = [
            (self.create_service(ConfirmTool, c.confirm_service, self._on_confirm,
                                 callback_group=MutuallyExclusiveCallbackGroup()),
             self.destroy_service),
            (self._selections, self.destroy_subscription),
            (self.create_service(ListWatches, c.list_watches_service, self._on_list_watches,
                                 callback_group=watch_group), self.destroy_service),
            (self.create_service(CancelWatch, c.cancel_watch_service, self._on_cancel_watch,
                                 callback_group=watch_group), self.destroy_service),
            (self.create_timer(c.watch_period_s, self.watches.tick,
                               callback_group=MutuallyExclusiveCallbackGroup()),
             self.destroy_timer),
            *self._activity,  # the MAVLink telemetry timer, made by _open_mavlink
        ]
        self._active = True
        self._publish_pending()
        self.get_logger().info(
            f'executor ready: mode {c.mode.value}, {len(bindings)} bindings, listening on '
            f'{c.selection_topic}, traces -> {self._writer.path}'
        )

    def _deactivate(self, reason: str) -> None:
        """Stop taking work, leaving a record for everything received; close the link.

        Cancel watches, trace queued selections as cancelled, interrupt confirmation
        waits, stop the workers (they finish their records).
        """
        self._closing = True
        was_active, self._active = self._active, False
        for entity, destroy in self._activity:  # no new selection, confirmation or tick
            if isinstance(entity, Timer):
                entity.cancel()
            destroy(entity)
        self._activity = []
        if was_active:
            self.watches.cancel_all(reason)
            self.intake.shutdown()
        self.book.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        with self._urgent_lock:
            urgent, self._urgent = self._urgent, []
        for runner in urgent:  # an emergency stop's record is written before the files close
            runner.join(timeout=30.0)
        if self._mavlink is not None:
            self._mavlink.close()
            self._mavlink = None
        if self._dispatcher is not None:
            self._dispatcher.close()
            self._dispatcher = None

    def _close_traces(self) -> None:
        timer = getattr(self, '_health_timer', None)
        if timer is not None:
            timer.cancel()
            self.destroy_timer(timer)
            self._health_timer = None
        if self._sink is not None:
            self._sink.close()
            self._sink = None

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
        self._activity += [
            (self._vehicle_topics, TelemetryPublisher.close),
            (self.create_timer(TELEMETRY_PERIOD_S, self._publish_telemetry,
                               callback_group=MutuallyExclusiveCallbackGroup()),
             self.destroy_timer)]
        return KindRouter(MavlinkDispatcher(self._mavlink), ros_dispatcher), sampler

    def _publish_telemetry(self) -> None:
        from tool_router.executor.mavlink_telemetry import link_telemetry

        link = self._mavlink
        if link is None:
            return
        try:
            self._vehicle_topics.publish(link_telemetry(link))
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
        """Take this selection and the ones already waiting behind it (a flood's defence)."""
        self._take_selection(msg)
        for waiting in take_waiting(self._selections, SELECTION_DEPTH):
            self._take_selection(waiting)

    def _take_selection(self, msg: SelectedCapabilities) -> None:
        try:
            signatures = Signatures(router_signature=msg.router_signature,
                                    policy=msg.requested_policy,
                                    max_tools=int(msg.requested_max_tools), key_id=msg.key_id,
                                    timestamp=float(msg.timestamp), nonce=msg.nonce,
                                    signature=msg.signature)
            # the router's signature before the message is read in full: a forged one costs
            # one HMAC, not a validated Selection (docs/SECURITY.md, "Floods")
            choices = msg.choices
            refused = self.intake.screen(msg.request_id, msg.request_text,
                                         [ch.tool for ch in choices],
                                         [ch.clause_index for ch in choices],
                                         [ch.condition for ch in choices], signatures)
            if refused is not None:
                self._ack(refused, msg.router_signature)
                return
            selection = selection_from_msg(msg)
        except pydantic.ValidationError as exc:
            self.get_logger().error(f'unusable selection {msg.request_id!r}: {first_error(exc)}')
            return
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
        sink, active = self._sink, self._active
        if sink is None:
            return
        if active:
            self.intake.tick()  # a flood window's summary record
        health = sink.flush()
        level, message = health.status()
        values = {
            'trace_on_disk': str(health.on_disk).lower(), 'trace_backlog': str(health.backlog),
            'trace_dropped': str(health.dropped), 'trace_error': health.error,
            'active': str(active).lower(), 'mode': self.config.mode.value,
        }
        if active:
            values.update({'queued_selections': str(self.intake.waiting),
                           'watches_armed': str(len(self.watches.armed())),
                           'pending_confirmations': str(len(self.book.pending()))})
        elif level == 'OK':
            level, message = 'WARN', 'configured, not active: no selection is taken'
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
        """Stop cleanly, leaving a record for everything received, then close the traces."""
        self._deactivate('executor shutdown: watches do not survive a restart')
        self._close_traces()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Run the executor node until Ctrl-C."""
    return spin(ExecutorNode, args, threads=4)


if __name__ == '__main__':
    raise SystemExit(main())
