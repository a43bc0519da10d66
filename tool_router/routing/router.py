"""The router: catalog + index + policies + allowlist validation, no ROS.

``Router.route(text, policy, max_tools)`` is what the node's service, the CLI
and the evaluation all call. It checks the input, runs one policy, passes the
answer through the allowlist validator and times it.

Policies are built from the registry (:mod:`tool_router.routing.policies.registry`)
with a :class:`~tool_router.routing.policies.registry.PolicyContext`; they never see
the router. The router is the one place that applies ``max_tools``: it cuts
every answer to the bound and reports what it cut, what was not in the
catalog and what was named twice (:meth:`RouteResult.explanation`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tool_router.common.catalog import Catalog, load_catalog
from tool_router.common.choice import ToolChoice, names
from tool_router.routing.config import BaseRouterConfig, RouterConfig
from tool_router.routing.embeddings import BatchingEncoder, Encoder, SentenceTransformerEncoder
from tool_router.common.errors import ConfigError, IndexStoreError, RequestError, ToolRouterError
from tool_router.common.explanation import Explanation, QuestionDrop, SafetyReport
from tool_router.routing.index import CatalogIndex, open_client
from tool_router.common.paths import config_path, ros_home
from tool_router.routing.policies.base import Decision, Policy, claim_clauses, request_clock
from tool_router.routing.policies.registry import PolicyContext, Registry
from tool_router.routing.question_probe import QuestionProbe, load_probe
from tool_router.routing.arrival_questions import answer_arrival_questions
from tool_router.routing.past_questions import drop_past_event_sensors
from tool_router.routing.arrivals import add_arrival_sensor, add_waypoint_progress
from tool_router.routing.not_this_vehicle import drop_outside_requests
from tool_router.routing.pronoun_orders import add_pronoun_orders
from tool_router.routing.unserved_modes import drop_unserved_modes
from tool_router.routing.parameters import drop_parameter_tools
from tool_router.routing.move_heights import add_move_heights
from tool_router.routing.told_orders import told_orders_are_the_message
from tool_router.routing.speeds import add_explicit_speeds
from tool_router.routing.face_home import face_home_is_a_heading
from tool_router.routing.mission_stops import mission_stop_is_a_hold
from tool_router.routing.preflight import drop_preflight_departure
from tool_router.routing.takeoff_height import climb_is_the_takeoff_height
from tool_router.routing.vertical_moves import vertical_move_is_altitude
from tool_router.routing.landing_places import flight_to_a_landing_place, one_landing
from tool_router.routing.condition_sensors import (add_joined_sensors, drop_condition_orders,
                                                   drop_extra_readings)
from tool_router.routing.keyword_runs import KeywordRuns
from tool_router.routing.payload_questions import answer_payload_questions
from tool_router.routing.mode_questions import answer_mode_questions
from tool_router.routing.payload_kills import payload_kills
from tool_router.routing.rear_view import add_rear_view_turn
from tool_router.routing.search_patterns import (
    add_search_pattern,
    named_shape_is_a_mission,
    shape_around_is_a_mission,
)
from tool_router.routing.until_seen import add_until_seen
from tool_router.routing.questions import answer_questions
from tool_router.routing.safety import Screen, visible
from tool_router.routing.validate import validate_selection

log = logging.getLogger(__name__)

@dataclass
class RouteResult:
    """One routing decision, validated against the allowlist: its choices, best first."""

    request_id: str
    text: str
    policy: str
    choices: list[ToolChoice]
    latency_ms: float
    dropped: list[str] = field(default_factory=list)  # names outside the catalog
    duplicates: list[str] = field(default_factory=list)  # names the policy gave twice
    truncated: list[str] = field(default_factory=list)  # cut by the max_tools bound
    max_tools: int = 0  # the bound applied
    fallback_used: bool = False
    fallback_reason: str = ''
    safety: SafetyReport | None = None  # what the safety screen removed, if anything
    questions: list[QuestionDrop] = field(default_factory=list)  # actuators a question dropped
    decision: Decision | None = None

    @property
    def tools(self) -> list[str]:
        """The chosen tools' names, best first."""
        return names(self.choices)

    @property
    def scores(self) -> list[float]:
        """The chosen tools' scores, best first."""
        return [c.score for c in self.choices]

    def explanation(self) -> Explanation:
        """The one explanation of this answer (sent as ``explanation_json``)."""
        base = self.decision.capped(len(self.tools)) if self.decision else None
        out = base.explanation() if base else Explanation(policy=self.policy)
        served = set(self.tools)
        return out.model_copy(
            update={
                'evidence': {t: v for t, v in out.evidence.items() if t in served},
                'clause_index': {t: i for t, i in out.clause_index.items() if t in served},
                'conditions': {t: c for t, c in out.conditions.items() if t in served},
                'dropped': list(self.dropped),
                'duplicates': list(self.duplicates),
                'truncated': list(self.truncated),
                'max_tools': self.max_tools,
                'safety': self.safety,
                'questions': list(self.questions),
            }
        )


def check_config(config: BaseRouterConfig, catalog: Catalog) -> None:
    """Checks of the configuration that need the catalog; :class:`ConfigError` names the field."""
    if config.max_tools > len(catalog):
        raise ConfigError(
            f'max_tools: {config.max_tools} is more than the catalog\'s {len(catalog)} tools',
            hint=f'set max_tools between 1 and {len(catalog)}',
        )
    if config.policy not in type(config).registry:
        raise ConfigError(
            f'policy: unknown policy {config.policy!r}', hint=type(config).registry.hint()
        )


def check_text(text: Any, max_length: int) -> str:
    """Return the request text, or raise :class:`RequestError` saying what is wrong."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode('utf-8')
        except UnicodeDecodeError as exc:
            raise RequestError(f'request is not valid UTF-8 (byte {exc.start})') from None
    if not isinstance(text, str):
        raise RequestError(f'request must be text, not {type(text).__name__}')
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        raise RequestError('request is not valid UTF-8 (unpaired surrogate)') from None
    if '\ufffd' in text:
        # rclpy decodes a message's invalid UTF-8 bytes to U+FFFD instead of refusing them.
        raise RequestError(
            'request is not valid UTF-8 (U+FFFD: bytes the sender sent did not decode)'
        )
    if not visible(text).strip():  # control, zero-width and BOM characters show nothing
        raise RequestError('request is empty')
    if len(text) > max_length:
        raise RequestError(
            f'request is {len(text)} characters, longer than the maximum {max_length}',
            hint='shorten it or raise max_text_length',
        )
    return text


MAX_REQUEST_ID = 256


def check_request_id(request_id: Any) -> str:
    """A caller's request id ('' = the router makes one), or :class:`RequestError`.

    Callers choose the id when they sign a request (docs/SECURITY.md); it goes into
    acknowledgements, traces and logs, so it must be short, printable text.
    """
    if not isinstance(request_id, str):
        raise RequestError(f'request_id must be text, not {type(request_id).__name__}')
    if len(request_id) > MAX_REQUEST_ID:
        raise RequestError(f'request_id is {len(request_id)} characters, longer than the '
                           f'maximum {MAX_REQUEST_ID}')
    if request_id != request_id.strip() or not request_id.isprintable():
        raise RequestError('request_id has control, invisible or surrounding space characters')
    return request_id


class _Generation:
    """One configuration and the policies built from it; retired, it is closed when idle."""

    def __init__(self, config: BaseRouterConfig, shared: dict[str, Any],
                 probe: QuestionProbe | None = None) -> None:
        self.config = config
        self.probe = probe  # the question probe of this configuration (None: off)
        self.policies: dict[str, Policy] = {}
        self.shared = shared  # resources shared by policies (lcr's extractor), kept across
        self.users = 0
        self.retired = False

    def close(self) -> None:
        for policy in self.policies.values():
            close = getattr(policy, 'close', None)
            if close is not None:
                close()
        self.policies = {}


class Router:
    """Everything needed to answer a routing request in-process.

    Thread-safe: every request routes with one snapshot of the configuration
    and the policies built from it. :meth:`reconfigure` swaps in a new snapshot;
    the old one's policies are closed once no request uses them any more.
    """

    def __init__(
        self,
        config: BaseRouterConfig | None = None,
        *,
        catalog: Catalog | None = None,
        encoder: Encoder | None = None,
        index: CatalogIndex | None = None,
    ) -> None:
        config = config or RouterConfig()
        self.registry: Registry = type(config).registry
        self.catalog = catalog or (
            index.catalog if index else load_catalog(config.resolved_catalog())
        )
        check_config(config, self.catalog)
        self._gen = _Generation(config, {})
        self._lock = threading.Lock()  # guards the current generation and its users
        self._build_lock = threading.RLock()  # one policy build at a time (hybrid builds two)
        self.index_warning = ''
        self._in_flight = 0
        self._in_flight_lock = threading.Lock()
        if index is None:
            if encoder is None:
                e = config.encoder
                encoder = SentenceTransformerEncoder(
                    config.model, config.device, e.backend, e.threads, e.cache_size,
                    e.pass_threads,
                )
                # Concurrent requests share forward passes (micro-batching, bounded wait).
                s = config.serving
                encoder = BatchingEncoder(
                    encoder, s.batch_wait_ms, s.batch_max, expected=lambda: self._in_flight,
                    lanes=s.lanes,
                )
            index = self._open_index(encoder)
        self.index = index
        self.encoder = index.encoder
        self.screen = Screen(self.catalog.names)  # safety: injection-only text counts for nothing
        self.keyword_runs = KeywordRuns(self.catalog)
        self._probes: dict[str, QuestionProbe | None] = {}
        # a named probe file that cannot be read fails here
        self._gen.probe = self._question_probe(config)
        self.policy(config.policy)  # build the default policy now, not on the first request
        if config.blas_threads:
            # After the model is loaded, so that its BLAS libraries are covered too.
            # Process-wide by design: see RouterConfig.blas_threads.
            from threadpoolctl import threadpool_limits

            # Keep the limiter: threadpoolctl restores the old limits when it is collected.
            self._blas_limit = threadpool_limits(limits=config.blas_threads, user_api='blas')

    @property
    def config(self) -> BaseRouterConfig:
        """The current configuration (read-only: change it with :meth:`reconfigure`)."""
        return self._gen.config

    def _open_index(self, encoder: Encoder) -> CatalogIndex:
        c = self.config
        exact = c.exact_max_records
        if c.chroma_url:
            return CatalogIndex(
                self.catalog,
                encoder,
                open_client(url=c.chroma_url),
                c.chroma_prefix,
                exact_max_records=exact,
                shortlist=c.shortlist,
            )
        if c.chroma_ephemeral:
            return CatalogIndex.ephemeral(self.catalog, encoder, exact, c.shortlist)
        path = c.chroma_path or str(ros_home() / 'tool_router' / 'chroma')
        try:
            # Chroma is opened only when needed: the vectors' cache file in the same
            # directory serves exact scoring (the start-up seconds: docs/PERFORMANCE.md).
            return CatalogIndex(
                self.catalog,
                encoder,
                lambda: open_client(persist_dir=path),
                c.chroma_prefix,
                cache_dir=path,
                exact_max_records=exact,
                shortlist=c.shortlist,
            )
        except IndexStoreError as exc:
            # Keep serving from memory; the persistent directory is left untouched for inspection.
            self.index_warning = f'persistent index unusable, serving from memory: {exc}'
            log.error(self.index_warning)
            return CatalogIndex.ephemeral(self.catalog, encoder, exact, c.shortlist)

    def policy_hint(self) -> str:
        """What to say after an unknown policy name: the registered ones."""
        return self.registry.hint()

    def policy(self, name: str) -> Policy:
        """The policy ``name`` ('' = the configured default) of the current configuration."""
        return self._policy(self._gen, name)

    def _policy(self, gen: _Generation, name: str) -> Policy:
        name = name or gen.config.policy
        found = gen.policies.get(name)
        if found is not None:
            return found
        spec = self.registry.get(name)  # RequestError naming the known policies
        with self._build_lock:
            if name not in gen.policies:
                ctx = PolicyContext(
                    spec=spec,
                    catalog=self.catalog,
                    index=self.index,
                    config=gen.config,
                    registry=self.registry,
                    policy=lambda other: self._policy(gen, other),
                    shared=gen.shared,
                )
                gen.policies[name] = spec.build(ctx)
            return gen.policies[name]

    def prepare(self, config: BaseRouterConfig) -> '_Generation':
        """Check and build what :meth:`commit` would switch to (the default policy built now).

        Raises :class:`ConfigError` (or the policy's error) when the configuration is
        unusable; nothing changes either way until :meth:`commit`.
        """
        if type(config).registry is not self.registry:
            raise ConfigError('the new configuration was built for another policy registry')
        check_config(config, self.catalog)
        new = _Generation(config, self._gen.shared, self._question_probe(config))
        try:
            self._policy(new, config.policy)
        except Exception:
            new.close()
            raise
        return new

    def commit(self, prepared: '_Generation') -> None:
        """Route with ``prepared`` from the next request on (requests in flight finish as is)."""
        with self._lock:
            old, self._gen = self._gen, prepared
            old.retired = True
            idle = old.users == 0
        if idle:
            old.close()

    def _question_probe(self, config: BaseRouterConfig) -> QuestionProbe | None:
        """The question probe of ``config`` (None: off, or fitted on another encoder).

        Loaded once per file; a file named in the configuration that cannot be read is a
        ConfigError, the shipped one missing means no probe.
        """
        key = config.question_probe
        with self._lock:
            if key in self._probes:
                return self._probes[key]
        probe: QuestionProbe | None = None
        path = Path(key) if key and key != 'off' else config_path('question_probe.json')
        if key != 'off' and (key or path.exists()):
            probe = load_probe(path)
            if not probe.reads(self.encoder):
                log.warning('question probe %s was fitted on encoder %s, not on %s: off (the '
                            'question rules decide alone)', path, probe.weights_id,
                            getattr(self.encoder, 'weights_id', self.encoder.model_id))
                probe = None
        with self._lock:
            self._probes[key] = probe
        return probe

    def _probe_state(self) -> str:
        """The question probe as /diagnostics says it: on with its threshold, or off and why."""
        probe = self._gen.probe
        if probe is not None:
            return f'on (threshold {probe.threshold:.2f})'
        if self.config.question_probe == 'off':
            return 'off (question_probe: off)'
        return 'off (no probe file, or fitted on another encoder)'

    def reconfigure(self, config: BaseRouterConfig) -> None:
        """Use new policy constants from the next request on (:meth:`prepare`, :meth:`commit`).

        Catalog, model and index stay (their parameters need a new router).
        """
        self.commit(self.prepare(config))

    def close(self) -> None:
        """Close the built policies (their HTTP clients); they are built again when used."""
        with self._lock:
            gen = self._gen
            self._gen = _Generation(gen.config, gen.shared, gen.probe)
            gen.retired = True
            idle = gen.users == 0
        if idle:
            gen.close()

    def __enter__(self) -> 'Router':
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def route(
        self,
        text: Any,
        policy: str = '',
        max_tools: int = 0,
        request_id: str = '',
        started: float | None = None,
    ) -> RouteResult:
        """Route one request; raise :class:`RequestError` for bad input.

        ``started`` (``time.perf_counter()``, default now) is when the request
        arrived: a policy's deadline (``hybrid.deadline_ms``) counts from there.
        """
        start = time.perf_counter() if started is None else started
        with self._lock:
            gen = self._gen  # one configuration and one set of policies for the whole request
            gen.users += 1
        try:
            return self._route(gen, start, text, policy, max_tools, request_id)
        finally:
            with self._lock:
                gen.users -= 1
                idle = gen.retired and gen.users == 0
            if idle:
                gen.close()

    def _route(
        self,
        gen: _Generation,
        start: float,
        text: Any,
        policy: str,
        max_tools: int,
        request_id: str,
    ) -> RouteResult:
        config = gen.config
        text = check_text(text, config.max_text_length)
        request_id = check_request_id(request_id)
        if max_tools < 0:
            raise RequestError('max_tools must be >= 0')
        bound = min(max_tools or config.max_tools, len(self.catalog))
        chosen = self._policy(gen, policy)
        screened = self.screen.screen(text)
        with self._in_flight_lock:
            self._in_flight += 1  # tells the batching encoder how many requests may join
        try:
            if screened.empty:
                decision = Decision(
                    chosen.name,
                    [],
                    [],
                    abstained=True,
                    note='nothing left after the safety screen (docs/SAFETY.md)',
                )
            else:
                with request_clock(start):
                    decision = chosen.route(screened.text, bound)
        except ToolRouterError:
            raise
        except Exception as exc:  # noqa: BLE001 - a policy bug must not take the service down
            log.exception('policy %s failed', chosen.name)
            raise ToolRouterError(f'policy {chosen.name} failed: {exc}') from exc
        finally:
            with self._in_flight_lock:
                self._in_flight -= 1
        if not screened.empty:
            # "alt speed heading?", "arm takeoff hover": a request made only of catalog words
            # reads as their tools (routing/keyword_runs.py), before the rules that drop
            decision, _ = self.keyword_runs.add(decision, screened.text)
            # a clause about autopilot parameters selects nothing (routing/parameters.py)
            decision, _ = drop_parameter_tools(decision, screened.text, self.catalog)
            # a fleet or raw stick input is outside one vehicle's catalog
            # (routing/not_this_vehicle.py; ANNOTATION.md)
            decision, _ = drop_outside_requests(decision, screened.text, self.catalog)
            # a switch to an autopilot mode no tool serves (routing/unserved_modes.py)
            decision, _ = drop_unserved_modes(decision, screened.text)
            # "kill the floodlight" switches the light off, never the motors
            # (routing/payload_kills.py)
            decision, _ = payload_kills(decision, screened.text, self.catalog)
            # "face home" turns the vehicle, it does not fly it home (routing/face_home.py)
            decision, _ = face_home_is_a_heading(decision, screened.text, self.catalog)
            # "stop the mission" holds, it runs no mission (routing/mission_stops.py)
            decision, _ = mission_stop_is_a_hold(decision, screened.text, self.catalog)
            # "check the battery before takeoff": the time of the checks (routing/preflight.py)
            decision, _ = drop_preflight_departure(decision, screened.text, self.catalog)
            # "take off and climb to 30 m": the takeoff's height (routing/takeoff_height.py)
            decision, _ = climb_is_the_takeoff_height(decision, screened.text, self.catalog)
            # "move up 1 meter" is an altitude change (routing/vertical_moves.py)
            decision, _ = vertical_move_is_altitude(decision, screened.text, self.catalog)
            # "fly to Dock" flies there; it lands nowhere (routing/landing_places.py)
            decision, _ = flight_to_a_landing_place(decision, screened.text, self.catalog)
            decision, _ = one_landing(decision, screened.text, self.catalog)
            # a condition is watched by the sensor that reads it (routing/condition_sensors.py)
            decision, _ = drop_extra_readings(decision, screened.text, self.catalog)
            decision, _ = drop_condition_orders(decision, screened.text, self.catalog)
            decision, _ = add_joined_sensors(decision, screened.text, self.catalog)
            # "are we in loiter": the flight mode is vehicle_state's (routing/mode_questions.py)
            decision, _ = answer_mode_questions(decision, screened.text, self.catalog)
            # "what's the gimbal pitch", "winch position": the payload's state, not the
            # airframe's pose (routing/payload_questions.py)
            decision, _ = answer_payload_questions(decision, screened.text, self.catalog)
            # "are we at the gate yet?": where the vehicle is (routing/arrival_questions.py)
            decision, _ = answer_arrival_questions(decision, screened.text, self.catalog)
            # "did the failsafe fire when we lost the link": the event is past, not read
            # (routing/past_questions.py)
            decision, _ = drop_past_event_sensors(decision, screened.text, self.catalog)
        drops: list[QuestionDrop] = []
        if config.state_questions and not screened.empty:
            # a clause that asks about a state is answered by a sensor, never an actuator,
            # whatever the policy (routing/questions.py; ANNOTATION.md)
            probe, vector = gen.probe, decision.request_vector
            if probe is None or vector is None:
                answered = answer_questions(decision, screened.text, self.catalog)
            else:  # lcr's own vector: the probe's second opinion costs no forward pass
                answered = answer_questions(decision, screened.text, self.catalog,
                                            partial(probe.probability, vector), probe.threshold)
            decision, drops = answered.decision, answered.drops
        if not screened.empty:
            # an explicit speed in an order adds set_speed (routing/speeds.py; ANNOTATION.md)
            decision, _ = add_explicit_speeds(decision, screened.text, self.catalog)
            # so does a height to fly a move at add set_altitude (routing/move_heights.py)
            decision, _ = add_move_heights(decision, screened.text, self.catalog)
            # "tell them to stay put": the speaker's message, not an order to the vehicle
            # (routing/told_orders.py)
            decision, _ = told_orders_are_the_message(decision, screened.text, self.catalog)
            # a picture behind the vehicle turns it first (routing/rear_view.py; ANNOTATION.md)
            decision, _ = add_rear_view_turn(decision, screened.text, self.catalog)
            # "go ... until you see X" moves and looks (routing/until_seen.py; ANNOTATION.md)
            decision, _ = add_until_seen(decision, screened.text, self.catalog)
            # a named search pattern for a target flies and looks (routing/search_patterns.py)
            decision, _ = add_search_pattern(decision, screened.text, self.catalog)
            decision, _ = shape_around_is_a_mission(decision, screened.text, self.catalog)
            decision, _ = named_shape_is_a_mission(decision, screened.text, self.catalog)
            # an arrival at a place is a position condition (routing/arrivals.py; CONVENTIONS.md)
            decision, _ = add_arrival_sensor(decision, screened.text, self.catalog)
            decision, _ = add_waypoint_progress(decision, screened.text, self.catalog)
            # "is the light on? if not, turn it on": the order's "it" is what the question
            # named (routing/pronoun_orders.py; CONVENTIONS.md)
            decision, _ = add_pronoun_orders(decision, screened.text, self.catalog)
        checked = validate_selection(decision.tools, decision.scores, self.catalog, bound)
        # every served tool in a clause, with its condition, whatever the policy (gated actions
        # of policies that do not read clauses would otherwise run at once)
        decision = claim_clauses(decision, screened.text, self.catalog, checked.tools)
        return RouteResult(
            request_id=request_id or uuid.uuid4().hex[:16],
            text=text,
            policy=chosen.name,
            choices=[decision.choice(t, s) for t, s in zip(checked.tools, checked.scores)],
            dropped=checked.dropped,
            duplicates=checked.duplicates,
            truncated=checked.truncated,
            max_tools=bound,
            latency_ms=(time.perf_counter() - start) * 1000.0,
            fallback_used=decision.fallback_used,
            fallback_reason=decision.fallback_reason,
            safety=(SafetyReport.model_validate(screened.summary())
                    if screened.removed or screened.read_as else None),
            questions=drops,
            decision=decision,
        )

    def health(self) -> dict[str, str]:
        """Model, device, catalog size, default policy and index state as strings (diagnostics)."""
        return {
            'model': self.encoder.model_id,
            'device': getattr(self.encoder, 'device', '?'),
            'catalog_size': str(len(self.catalog)),
            'default_policy': self.config.policy,
            'question_probe': self._probe_state(),
            **{f'index_{k}': v for k, v in self.index.health().items()},
            **({'index_warning': self.index_warning} if self.index_warning else {}),
        }
