"""The router node: serves /route_request and publishes selections for the executor.

A lifecycle (managed) node: ``configure`` validates the parameters, loads the
catalog, the embedding model and the index; ``activate`` starts serving;
``deactivate`` answers requests with ``success=false``; ``cleanup`` drops the
model. With ``autostart`` (default true) it configures and activates itself,
since a plain ``ros2 run`` has no lifecycle manager.

Routing does not act: ``/route_request`` with ``execute=false`` (the default)
only answers which tools would be picked. With ``execute=true`` the selection is
published for the executor and the answer is sent when its acknowledgement
arrives or ``executor_ack_timeout_s`` passes: ``executed=true`` means an
executor has it on disk; without one the answer is ``success=false``. That wait
holds no serving slot (:mod:`tool_router.ros.acks`). All names are relative,
so ``-r __ns:=/uav1`` moves them.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pydantic
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode, State, TransitionCallbackReturn
from rclpy.parameter import Parameter

from tool_router.routing.config import (BaseRouterConfig, RouterConfig, load_router_config,
                                        router_doors)
from tool_router.common.errors import ConfigError, ToolRouterError, first_error, one_line
from tool_router.common.param_doors import (flatten, set_dotted, unknown_names,
                                            unknown_problem)
from tool_router.common import signing
from tool_router.common.conditions import condition_notes
from tool_router.common.places import Place, load_places
from tool_router.msg import Request, SelectedCapabilities, SelectionAck
from tool_router.ros.convert import choice_msg, route_answer_msg, selection_message
from tool_router.ros.acks import AckBook, Outbox
from tool_router.ros.answers import Answers, client_id_problem
from tool_router.ros.common import (
    ack_qos,
    declare_from_dict,
    parameter_descriptions,
    parameters_as_dict,
    service_qos,
    spin,
    stamp_now,
    startup_problem,
)
from tool_router.routing.router import RouteResult, Router
from tool_router.routing.serving import BUSY, Admission, ServingParams, apply_priority
from tool_router.srv import RouteRequest, SetConfig
from tool_router.common.stats import percentiles
from tool_router.common.nonces import NonceStore
from tool_router.executor.auth import ConfirmationVerifier, default_operators_file
from tool_router.routing import signed_config
from tool_router.routing.signed_config import ConfigChange, ConfigJournal, change_lines, staged

# Which parameters may change at run time (routing/config.py; docs/SECURITY.md): only
# diagnostics_period_s. Everything else is read-only once declared (a params file or -p at start).
DOORS = router_doors()
# Parameters of the node itself (rclpy's and ours), not of the router configuration.
NODE_PARAMS = {'autostart', 'use_sim_time', 'start_type_description_service'}
ACK_TICK_S = 0.05  # how often selections waiting for an executor's reader are looked at


class RouterNode(LifecycleNode):
    """Thin ROS glue over :class:`tool_router.routing.router.Router`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('router_node', **kwargs)
        self._defaults = load_router_config().model_dump(mode='json')
        self._names = flatten(self._defaults)
        declare_from_dict(self, self._defaults, parameter_descriptions(RouterConfig), DOORS)
        self.declare_parameter('autostart', True, ParameterDescriptor(
            read_only=True, additional_constraints=DOORS.descriptor_note('autostart')))
        self.router: Router | None = None
        self.config: BaseRouterConfig | None = None
        self._active = False
        self._latencies: deque[float] = deque(maxlen=500)
        self._counts = {'ok': 0, 'rejected': 0, 'errors': 0, 'probes': 0}
        self._lock = threading.Lock()
        self._selection_pub = None
        self._decision_pub = None
        self._router_key: bytes | None = None  # signs selections (configure reads it)
        self._places: dict[str, Place] = {}  # named places of conditions (configure reads them)
        self._diag_pub = None
        self._timer = None
        self._error = ''
        # Requests are served concurrently (a reentrant group on a multi-threaded executor);
        # concurrent requests share forward passes in the encoder; Admission bounds how many
        # run at once and answers the rest "busy". The service's DDS history is deep enough
        # that a burst waits for a thread instead of being overwritten (KEEP_LAST 10, the
        # default, silently dropped requests of more than 10 concurrent clients).
        serving = self._serving_params()
        # Priority over co-located load (serving.nice, fixed at start like the threads): set
        # before main() builds the executor, whose threads inherit it.
        problem = apply_priority(serving.nice)
        if problem:
            self.get_logger().warning(problem)
        elif serving.nice:
            self.get_logger().info(f'process priority: nice {serving.nice}')
        self.serving_threads = serving.threads  # main() builds the executor with this many
        self._ack_waits = serving.ack_waits
        self._queue_depth = serving.queue_depth
        self._admission = Admission(serving)
        self._serve_group = ReentrantCallbackGroup()
        self._topic_group = MutuallyExclusiveCallbackGroup()
        self._srv = self.create_service(
            RouteRequest,
            'route_request',
            self._on_route,
            qos_profile=service_qos(serving.queue_depth),
            callback_group=self._serve_group,
        )
        # signed run-time changes of the configuration (routing/signed_config.py): served in
        # every lifecycle state, one at a time; what they set outlives a cleanup and configure
        self._signed: dict[str, Any] = {}
        self._change_log: list[str] = []
        self._config_verifier: ConfirmationVerifier | None = None
        self._journal: ConfigJournal | None = None
        self._config_srv = self.create_service(
            SetConfig, '~/set_config', self._on_set_config,
            callback_group=MutuallyExclusiveCallbackGroup())
        self._sub = None
        self._ack_sub = None
        self._ack_timer = None
        self._ack_group = MutuallyExclusiveCallbackGroup()
        self._acks = AckBook(serving.ack_waits)
        self._outbox = Outbox()  # selections waiting for an executor's reader to match
        # requests on the topic that name a client_id are answered on its own topic
        self._answers = Answers(self)
        self._answer_pool: ThreadPoolExecutor | None = None
        self._answer_backlog = 0
        # validated by on_set, applied by post_set (only writable parameters get there)
        self._staged: BaseRouterConfig | None = None
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

    def _serving_params(self) -> ServingParams:
        """``serving.*`` as the node starts: router.yaml, then a params file or ``-p``.

        ``threads`` and ``queue_depth`` are fixed from here on (executor, service QoS).
        Values that do not validate fall back to router.yaml's here; configure then
        refuses them with the validation error.
        """
        names = [n for n in self._names if n.startswith('serving.')]
        try:
            return ServingParams.model_validate(parameters_as_dict(self, names)['serving'])
        except pydantic.ValidationError:
            return RouterConfig.model_validate(self._defaults).serving

    # -- lifecycle ---------------------------------------------------------
    def startup(self) -> bool:
        """Configure and activate when ``autostart`` is set; False if configuration failed."""
        if not self.get_parameter('autostart').value:
            self.get_logger().info('waiting for lifecycle transitions (autostart is false)')
            return True
        self._autostarting = True  # the failure is logged once, here, not also by on_configure
        try:
            configured = self.trigger_configure() == TransitionCallbackReturn.SUCCESS
        finally:
            self._autostarting = False
        if configured:
            self.trigger_activate()
            return True
        self.get_logger().fatal(f'cannot configure, not serving: {self._error}')
        return False

    def _configure_failed(self, error: str) -> TransitionCallbackReturn:
        """Keep the error for :meth:`startup`; log it when configured by hand (lifecycle)."""
        self._error = error
        if not getattr(self, '_autostarting', False):
            self.get_logger().error(f'cannot configure: {error}')
        return TransitionCallbackReturn.FAILURE

    def _current_config(self) -> BaseRouterConfig:
        """The declared parameters, plus any unknown name from a params file or ``-p``.

        Unknown names are passed on so that validation rejects them (``polcy:``)
        exactly as ``tool-router route --config`` does, instead of ignoring them.
        """
        values = parameters_as_dict(self, self._names)
        unknown = unknown_names(self._parameter_overrides, [*self._names, *NODE_PARAMS])
        if unknown:  # named with its closest known name, as the executor does (moda -> mode)
            raise ConfigError(unknown_problem('router_node', unknown, self._names),
                              hint='every name: config/router.yaml')
        for name in sorted(set(self._parameter_overrides) - set(self._names) - NODE_PARAMS):
            set_dotted(values, name, self._parameter_overrides[name].value)
        for name, value in self._signed.items():  # signed changes outlive a reconfigure
            set_dotted(values, name, value)
        return RouterConfig.model_validate(values)

    def on_configure(self, state: State) -> TransitionCallbackReturn:
        """Load catalog, model and index; refuse (FAILURE) with a clear message on bad input."""
        start = time.perf_counter()
        try:
            self.config = self._current_config()
            # the named places conditions may name, read as the executor reads them
            self._places = load_places(self.config.places_file or None)
            # the key the executor checks selections by (made here on the first start)
            self._router_key = signing.router_key(self.config.resolved_router_key(), create=True)
            # the key the executor signs its acks with (made here when the router starts first)
            self._acks.key = signing.router_key(self.config.resolved_executor_key(), create=True)
            self._open_config_door(self.config)
            self.router = Router(self.config)
            self._admission.params = self.config.serving  # bounds from the node's parameters
        except OSError as exc:  # a key's or the config journal's directory is not writable
            return self._configure_failed(f'router key or config journal: {exc}')
        except (ToolRouterError, pydantic.ValidationError) as exc:
            return self._configure_failed(startup_problem(exc))
        if self.router.index_warning:
            self.get_logger().warning(self.router.index_warning)
        c = self.config
        self._decision_pub = self.create_lifecycle_publisher(
            SelectedCapabilities, c.decision_topic, 50
        )
        self._selection_pub = self.create_lifecycle_publisher(
            SelectedCapabilities, c.selection_topic, 10
        )
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._sub = self.create_subscription(
            Request, c.request_topic, self._on_request, 50, callback_group=self._topic_group
        )
        self._ack_sub = self.create_subscription(
            SelectionAck,
            c.ack_topic,
            self._on_ack,
            ack_qos(),
            callback_group=self._ack_group,
        )
        self._ack_timer = self.create_timer(
            ACK_TICK_S, self._tick_selections, callback_group=self._ack_group
        )
        self._timer = self.create_timer(c.diagnostics_period_s, self._publish_diagnostics)
        h = self.router.health()
        self.get_logger().info(
            f'configured in {time.perf_counter() - start:.1f} s: {h["catalog_size"]} tools, model '
            f'{h["model"]} on {h["device"]}, index {h["index_state"]}, default policy {c.policy}'
        )
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: State) -> TransitionCallbackReturn:
        """Start serving /route_request."""
        self._active = True
        self.get_logger().info(
            f"serving {self.resolve_service_name('route_request')} ({self.serving_threads} "
            f'executor threads and {self._ack_waits} for answers waiting for an executor ack, '
            f'queue depth {self._queue_depth})'
        )
        return super().on_activate(state)

    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        """Stop serving; requests are refused until activated again."""
        self._active = False
        return super().on_deactivate(state)

    def on_cleanup(self, state: State) -> TransitionCallbackReturn:
        """Release the router and its index."""
        self._teardown()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: State) -> TransitionCallbackReturn:
        """Stop serving and release everything."""
        self._active = False
        self._teardown()
        return TransitionCallbackReturn.SUCCESS

    def _teardown(self) -> None:
        for entity, destroy in (
            (self._sub, self.destroy_subscription),
            (self._ack_sub, self.destroy_subscription),
            (self._timer, self.destroy_timer),
            (self._ack_timer, self.destroy_timer),
            (self._selection_pub, self.destroy_lifecycle_publisher),
            (self._decision_pub, self.destroy_lifecycle_publisher),
            (self._diag_pub, self.destroy_publisher),
        ):
            if entity is not None:
                destroy(entity)
        self._sub = self._ack_sub = self._timer = self._ack_timer = self._diag_pub = None
        self._selection_pub = self._decision_pub = None
        with self._lock:
            pool, self._answer_pool = self._answer_pool, None
        if pool is not None:  # answered requests still waiting are dropped (not routed)
            pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            self._answer_backlog = 0  # the cancelled ones never counted themselves out
        self._answers.close()
        if self.router is not None:
            self.router.close()
        self.router = None

    def _validate_parameters(self, params: list[Parameter]) -> SetParametersResult:
        """Refuse a change of a fixed parameter; validate one of a writable one.

        The parameter service is open to every process on the DDS domain, so only
        :data:`DOORS`'s writable names (``diagnostics_period_s``) change at run time, in any
        lifecycle state; the rest are fixed at start (read-only descriptors stop them in
        rclpy; this stops ``use_sim_time``, which rclpy declares). Added after rclpy's time
        source, this callback runs before it.
        """
        self._staged = None
        changed = {p.name: p.value for p in params}
        refusal = DOORS.refusal(changed)
        if refusal:
            return SetParametersResult(successful=False, reason=refusal)
        merged = parameters_as_dict(self, self._names)
        for name, value in changed.items():
            set_dotted(merged, name, value)
        try:
            self._staged = RouterConfig.model_validate(merged)
        except pydantic.ValidationError as exc:
            return SetParametersResult(successful=False, reason=first_error(exc))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, params: list[Parameter]) -> None:
        """Apply what :meth:`_validate_parameters` accepted (the diagnostics period)."""
        new, self._staged = self._staged, None
        if new is None:
            return
        if self.config is not None:  # configured: the running configuration takes the change
            self.config = self.config.model_copy(
                update={'diagnostics_period_s': new.diagnostics_period_s})
        if self._timer is not None:
            self._timer.timer_period_ns = int(new.diagnostics_period_s * 1e9)

    # -- signed configuration changes --------------------------------------
    def _open_config_door(self, config: BaseRouterConfig) -> None:
        """The operators whose admins may change the configuration, and the journal."""
        path = Path(config.operators_file) if config.operators_file else default_operators_file()
        folder = (Path(config.config_dir) if config.config_dir
                  else signed_config.default_config_dir())
        slug = signed_config.node_slug(self.get_fully_qualified_name())
        window = signed_config.MAX_AGE_S
        nonces = NonceStore(folder / f'{slug}.nonces.jsonl', 2 * window)  # a restart forgets none
        self._config_verifier = ConfirmationVerifier.from_file(
            path, lambda tool: 'none', window, nonces=nonces)
        self._journal = ConfigJournal(folder / f'{slug}.jsonl')

    def _on_set_config(self, request: SetConfig.Request,
                       response: SetConfig.Response) -> SetConfig.Response:
        """Apply a signed change of the configuration, or say why not (nothing changes)."""
        node = self.get_fully_qualified_name()
        if not request.parameters and not request.signature and not request.key_id:
            response.success = True  # a probe: what was changed since start
            response.changed = list(self._change_log)
            response.message = (f'{node}: {len(self._change_log)} signed changes since start'
                                if self._change_log else f'{node}: no signed change since start')
            return response
        response.success = False
        verifier, journal, config = self._config_verifier, self._journal, self.config
        if verifier is None or journal is None or config is None or self.router is None:
            response.message = f'refused: {node} is not configured (nothing changed)'
            return response
        asked: dict[str, Any] = {}
        for item in request.parameters:
            value = Parameter.from_parameter_msg(item).value
            asked[item.name] = list(value) if isinstance(value, (list, tuple)) or hasattr(
                value, 'tolist') else value
        base = dict(stamp=time.time(), node=node, key_id=request.key_id[:64],
                    nonce=request.nonce[:64])

        def refuse(reason: str, operator: str = '') -> SetConfig.Response:
            journal.refused(ConfigChange(event='refused', operator=operator, reason=reason,
                                         changes=signed_config.asked_record(asked), **base))
            self.get_logger().warning(f'SECURITY: configuration change refused ({reason})',
                                      throttle_duration_sec=5.0)
            response.message = f'refused ({reason}); nothing changed'
            return response

        if len(asked) != len(request.parameters):
            return refuse('malformed: a parameter is named twice')
        try:
            verdict = verifier.verify_config(node, asked, request.timestamp, request.nonce,
                                             request.key_id, request.signature)
        except (TypeError, ValueError) as exc:  # a value JSON cannot write (NaN, bytes)
            return refuse(f'malformed: {exc}')
        if not verdict.ok:
            return refuse(f'{verdict.reason}: {verdict.detail}', verdict.operator_name)
        who = verdict.operator_name
        try:
            new, diff = staged(config, asked)
        except ToolRouterError as exc:
            return refuse(f'invalid: {exc}', who)
        changes = {n: [old, value] for n, (old, value) in diff.items()}
        if not diff:
            try:
                journal.write(ConfigChange(event='applied', operator=who,
                                           reason='nothing to change', **base))
            except OSError:
                pass
            response.success = True
            response.message = 'nothing to change: every value was already so'
            return response
        try:  # on disk before it is applied
            journal.write(ConfigChange(event='decided', operator=who, changes=changes, **base))
        except OSError as exc:
            response.message = (f'refused: the configuration journal {journal.path} cannot be '
                                f'written ({exc.strerror}); nothing changed')
            return response
        try:
            prepared = self.router.prepare(new)
        except Exception as exc:  # noqa: BLE001 - any build failure leaves the old generation
            reason = f'did not build: {one_line(exc)}'
            try:
                journal.write(ConfigChange(event='failed', operator=who, changes=changes,
                                           reason=reason, **base))
            except OSError:
                pass
            response.message = f'refused ({reason}); nothing changed'
            return response
        self.router.commit(prepared)
        lines = change_lines(diff)
        with self._lock:
            self.config = new
            self._signed.update({n: v for n, v in asked.items() if n in diff})
            self._change_log.extend(f'{line} (by {who})' for line in lines)
        if 'diagnostics_period_s' in diff and self._timer is not None:
            self._timer.timer_period_ns = int(new.diagnostics_period_s * 1e9)
        note = ''
        try:
            journal.write(ConfigChange(event='applied', operator=who, changes=changes, **base))
        except OSError as exc:
            note = f' (its "applied" line could not be written: {exc.strerror})'
        self.get_logger().info(f'configuration changed by {who}: {"; ".join(lines) or "nothing"}')
        response.success = True
        response.changed = lines
        response.message = (f'applied by {who} from the next request on: {len(lines)} changed '
                            f'(until {node} restarts; a params file keeps a change){note}')
        return response

    # -- serving -----------------------------------------------------------
    def _route(
        self,
        text: Any,
        policy: str,
        max_tools: int,
        request_id: str = '',
        started: float | None = None,
    ) -> RouteResult:
        if not self._active or self.router is None:
            raise ToolRouterError('router is not active', hint='activate the lifecycle node')
        return self.router.route(text, policy, max_tools, request_id, started=started)

    def _on_route(
        self, request: RouteRequest.Request, response: RouteRequest.Response
    ) -> RouteRequest.Response:
        start = time.perf_counter()
        policy = request.policy or (self.config.policy if self.config else '')
        ticket = self._admission.enter(policy)
        if not ticket.admitted:
            response.success = False
            response.message = BUSY
            response.latency_ms = (time.perf_counter() - start) * 1000.0
            return response
        try:
            result = self._answer(request, response, start)
        finally:
            self._admission.leave(ticket)  # waiting for an ack costs no routing capacity
        if result is None:
            return response
        return self._execute(request, response, result, start)

    def _answer(
        self, request: RouteRequest.Request, response: RouteRequest.Response, start: float
    ) -> RouteResult | None:
        """Route and fill in ``response``; the result when it must still be executed."""
        try:
            # the deadline (hybrid.deadline_ms) counts from the callback's start
            result = self._route(
                request.text, request.policy, int(request.max_tools), request.request_id,
                started=start,
            )
        except ToolRouterError as exc:
            with self._lock:
                # an empty request is how clients probe the reply path (RouteClient): a
                # probe, counted apart, not a rejected request
                self._counts['probes' if not request.text else 'rejected'] += 1
            response.success = False
            response.message = str(exc)
            return None
        except Exception as exc:  # noqa: BLE001 - never let a request kill the service
            with self._lock:
                self._counts['errors'] += 1
            self.get_logger().error(f'routing failed: {exc!r}')
            response.success = False
            response.message = f'internal error: {exc}'
            return None
        response.success = True
        conditions = result.decision.conditions if result.decision else {}
        notes = condition_notes(list(result.tools), conditions, self._places, result.text)
        response.message = '; '.join(notes) if result.tools else 'no tool serves this request'
        response.request_id = result.request_id
        response.tools = result.tools
        response.choices = [choice_msg(c) for c in result.choices]
        response.policy = result.policy
        response.fallback_used = result.fallback_used
        response.fallback_reason = result.fallback_reason
        response.dropped = result.dropped
        response.explanation_json = result.explanation().to_json()
        response.latency_ms = (time.perf_counter() - start) * 1000.0
        if request.execute and result.tools:
            return result
        if not request.execute:
            self._publish(result, execute=False)
        self._count_answer(response.latency_ms)
        return None

    def _execute(self, request: RouteRequest.Request, response: RouteRequest.Response,
                 result: RouteResult, start: float) -> RouteRequest.Response:
        """Hand the selection to the executor; answer once it acknowledged it (or timed out)."""
        timeout = self.config.executor_ack_timeout_s if self.config else 2.0
        waiter = self._acks.park(result.request_id, timeout)  # before publishing: no ack unseen
        if waiter is None:
            response.success = False
            response.message = f'{BUSY}: {len(self._acks)} answers wait for executor acks'
            return response
        try:
            self._publish(result, execute=True, signed=request, resend=True)
            executed, reason = waiter.wait(unsent=self._outbox.unsent)
            if not executed and self._outbox.unsent(result.request_id):
                self.get_logger().warning(
                    f'selection {result.request_id} not sent: no executor subscribed to '
                    f'the selection topic within {timeout:g} s')
        finally:
            self._acks.release(waiter)
            self._outbox.forget(result.request_id)
        response.executed = executed
        if not executed:
            response.success = False
            note = f'routed but not executed: {reason}'
            response.message = '; '.join(filter(None, [note, response.message]))
        response.latency_ms = (time.perf_counter() - start) * 1000.0
        self._count_answer(response.latency_ms)
        return response

    def _on_ack(self, msg: SelectionAck) -> None:
        why = self._acks.receive(msg)
        if not why:  # a selection nobody waits for (the request topic's): stop re-sending it
            self._outbox.acknowledged(str(msg.request_id), str(msg.selection_signature),
                                      lambda: self._acks.genuine(msg))
        if why:
            self.get_logger().warning(
                f'SECURITY: ignored an ack for {msg.request_id!r} ({why}): not the '
                "executor's answer to our selection", throttle_duration_sec=5.0)

    def _count_answer(self, latency_ms: float) -> None:
        with self._lock:
            self._counts['ok'] += 1
            self._latencies.append(latency_ms)

    def _on_request(self, msg: Request) -> None:
        if msg.client_id:  # answered, as /route_request answers (ros/answers.py)
            self._take_answered(msg)
            return
        try:
            result = self._route(msg.text, msg.policy, int(msg.max_tools), msg.request_id)
        except ToolRouterError as exc:
            with self._lock:
                self._counts['rejected'] += 1
            self.get_logger().warning(f'request {msg.request_id or "?"} rejected: {exc}')
            return
        self._count_answer(result.latency_ms)
        # an order is sent again until the executor acknowledges it, as on the service path
        # (the executor's reader is best effort: a flood or a lossy link drops samples)
        self._publish(result, execute=msg.execute, signed=msg, resend=msg.execute)

    def _take_answered(self, msg: Request) -> None:
        """Queue an answered request for a thread of the answered path (``max_in_flight``).

        Replayed requests (no ``client_id``) stay in this callback, in order. Beyond
        ``serving.queue_depth`` waiting, the answer is "busy" at once, as the service's.
        """
        problem = client_id_problem(msg.client_id)
        if problem:
            with self._lock:
                self._counts['rejected'] += 1
            self.get_logger().warning(f'request {msg.request_id or "?"} not answered: {problem}',
                                      throttle_duration_sec=5.0)
            return
        with self._lock:
            full = self._answer_backlog >= self._queue_depth
            if not full:
                self._answer_backlog += 1
            if self._answer_pool is None:
                # no more at once than admission lets route (serving.max_in_flight): the
                # rest wait here in order instead of being answered "busy"
                workers = min(self.serving_threads, self._admission.params.max_in_flight)
                self._answer_pool = ThreadPoolExecutor(max_workers=max(1, workers),
                                                       thread_name_prefix='router-answer')
            pool = self._answer_pool
        if full:
            busy = RouteRequest.Response(success=False, message=BUSY)
            self._answers.publish(msg.client_id, route_answer_msg(
                busy, msg.client_id, msg.request_id, stamp_now(self)))
            return
        pool.submit(self._route_answered, msg)

    def _route_answered(self, msg: Request) -> None:
        """Route an answered request as /route_request would and publish its answer."""
        try:
            request = RouteRequest.Request(
                text=msg.text, policy=msg.policy, max_tools=int(msg.max_tools),
                execute=msg.execute, request_id=msg.request_id, key_id=msg.key_id,
                timestamp=float(msg.timestamp), nonce=msg.nonce, signature=msg.signature)
            response = self._on_route(request, RouteRequest.Response())
            answer = route_answer_msg(response, msg.client_id, msg.request_id,
                                      stamp_now(self))
            if not self._answers.publish(msg.client_id, answer):
                self.get_logger().warning(
                    f'answer to {msg.client_id} published with no reader on '
                    f'{self._answers.topic(msg.client_id)}: subscribe before sending',
                    throttle_duration_sec=5.0)
        finally:
            with self._lock:
                self._answer_backlog -= 1

    def _publish(self, result: RouteResult, execute: bool, signed: Any = None,
                 resend: bool = False) -> None:
        """Publish a decision on the decision topic; with ``execute`` also for the executor.

        The decision topic serves recording and scoring and is never executed; only
        the selection topic is acted on. ``signed`` lends its requester signature.
        """
        if not result.tools:
            return
        msg = selection_message(result, stamp_now(self), signed)
        if self._decision_pub is not None:
            self._decision_pub.publish(msg)
        if execute and self._selection_pub is not None and self._router_key is not None:
            # signed for the selection topic only: a recorded decision is no selection
            msg.router_signature = signing.selection_signature(msg, self._router_key)
            timeout = self.config.executor_ack_timeout_s if self.config else 2.0
            self._acks.expect(result.request_id, msg.router_signature)  # before it goes out
            if self._selection_pub.get_subscription_count() > 0:
                self._selection_pub.publish(msg)
                if resend:  # again until acked (a flooded reader drops samples)
                    self._outbox.track(result.request_id, msg, timeout)
            else:  # sent by _tick_selections once an executor's reader has matched
                self._outbox.put(result.request_id, msg, timeout, resend=resend)

    def _tick_selections(self) -> None:
        """Publish the selections waiting for a matched reader; drop those past their time."""
        pub = self._selection_pub
        if pub is None or not len(self._outbox):
            return
        ready, dropped = self._outbox.take(pub.get_subscription_count() > 0)
        for msg in ready:
            pub.publish(msg)
        for request_id in dropped:
            self.get_logger().warning(
                f'selection {request_id} not sent: no executor subscribed to '
                f'{pub.topic_name} in time')

    def _publish_diagnostics(self) -> None:
        if self._diag_pub is None:
            return
        # one status per node: two vehicles' routers are told apart by their namespace
        status = DiagnosticStatus(name=f'tool_router: router {self.get_fully_qualified_name()}',
                                  hardware_id='tool_router')
        values = dict(self.router.health()) if self.router else {}
        with self._lock:
            lat = list(self._latencies) if self._latencies else None
            values.update({k: str(v) for k, v in self._counts.items()})
        values.update({k: str(v) for k, v in self._admission.counters().items()})
        values.update({k: str(v) for k, v in self._acks.counters().items()})
        values.update({k: str(v) for k, v in self._answers.counters.items()})
        values['answers_waiting'] = str(self._answer_backlog)
        with self._lock:  # signed configuration changes since start (tool-router config show)
            values['config_changes'] = str(len(self._change_log))
            if self._change_log:
                values['config_last_change'] = self._change_log[-1]
        values['selections_waiting_for_executor'] = str(len(self._outbox))
        values['selections_never_sent'] = str(self._outbox.dropped)
        values['selections_sent_again'] = str(self._outbox.resent)
        encoder = self.router.encoder if self.router else None
        if encoder is not None and hasattr(encoder, 'batches'):
            values['encoder_batches'] = str(encoder.batches)
            values['encoder_batched_calls'] = str(encoder.batched_calls)
        if lat is not None:
            for key, value in percentiles(lat).items():
                values[f'latency_{key}_ms'] = f'{value:.2f}'
        values['active'] = str(self._active)
        values['pid'] = str(os.getpid())
        values['nice'] = str(os.getpriority(os.PRIO_PROCESS, 0))
        if not self._active:
            status.level, status.message = DiagnosticStatus.WARN, 'not active'
        elif values.get('index_warning'):
            status.level, status.message = DiagnosticStatus.WARN, 'serving from an in-memory index'
        else:
            status.level, status.message = DiagnosticStatus.OK, 'serving'
        status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
        self._diag_pub.publish(DiagnosticArray(header=self._header(), status=[status]))

    def _header(self) -> Any:
        from std_msgs.msg import Header

        return Header(stamp=stamp_now(self))


def main(args: list[str] | None = None) -> int:
    """Run the router node until interrupted (``serving.threads``: router.yaml, params, ``-p``)."""
    # an execute=true answer waits for its ack on an executor thread of its own (ros/acks.py)
    return spin(RouterNode, args,
                threads=lambda node: int(node.serving_threads) + int(node._ack_waits))


if __name__ == '__main__':
    raise SystemExit(main())
