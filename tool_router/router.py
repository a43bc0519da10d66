"""The router: catalog + index + policies + allowlist validation, no ROS.

``Router.route(text, policy, max_tools)`` is what the node's service, the CLI
and the evaluation all call. It checks the input, runs one policy, passes the
answer through the allowlist validator and times it.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from tool_router.catalog import Catalog, load_catalog
from tool_router.config import RouterConfig
from tool_router.embeddings import BatchingEncoder, Encoder, SentenceTransformerEncoder
from tool_router.errors import IndexStoreError, RequestError, ToolRouterError
from tool_router.index import CatalogIndex, open_client
from tool_router.paths import ros_home
from tool_router.policies.base import Decision, Policy
from tool_router.policies.cdb import CDBv1, CDBv2, CDBv3
from tool_router.safety import Screen, visible
from tool_router.validate import validate_selection

log = logging.getLogger(__name__)

PolicyFactory = Callable[['Router'], Policy]
POLICIES: dict[str, PolicyFactory] = {
    'cdbv1': lambda r: CDBv1(r.index, r.config.cdbv1),
    'cdbv2': lambda r: CDBv2(r.index, r.config.cdbv2),
    'cdbv3': lambda r: CDBv3(r.index, r.config.cdbv3),
}


def _llm_policy(router: 'Router') -> Policy:
    from tool_router.policies.llm import LLMPolicy  # lazy: httpx only when used

    return LLMPolicy.from_router(router)


def _hybrid_policy(router: 'Router') -> Policy:
    from tool_router.policies.hybrid import HybridPolicy  # lazy: httpx only when used

    return HybridPolicy.from_router(router)


def _lcr_factory(variant: str) -> PolicyFactory:
    def make(router: 'Router') -> Policy:
        from tool_router.policies.lcr import FeatureExtractor, LearnedClauseRouter

        if router._extractor is None:
            router._extractor = FeatureExtractor(router.index)
        return LearnedClauseRouter(router.index, router.config.lcr, variant, router._extractor)

    return make


for _variant in (
    'lcr',
    'lcr_no_clause_rule',
    'lcr_no_phrases',
    'lcr_no_lexical',
    'lcr_no_negation',
    'lcr_no_spelling',
    'lcr_no_steering',
    'lcr_no_scope',
):
    POLICIES[_variant] = _lcr_factory(_variant)
POLICIES['llm'] = _llm_policy
POLICIES['hybrid'] = _hybrid_policy


def register_policy(name: str, factory: PolicyFactory) -> None:
    """Make a policy available by name (used by the optional policies' modules)."""
    POLICIES[name] = factory


@dataclass
class RouteResult:
    """One routing decision, validated against the allowlist."""

    request_id: str
    text: str
    policy: str
    tools: list[str]
    scores: list[float]
    latency_ms: float
    dropped: list[str] = field(default_factory=list)
    fallback_used: bool = False
    fallback_reason: str = ''
    decision: Decision | None = None

    def explanation(self) -> dict[str, Any]:
        out = self.decision.explanation() if self.decision else {}
        if self.dropped:
            out['dropped'] = self.dropped
        return out


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


class Router:
    """Everything needed to answer a routing request in-process."""

    def __init__(
        self,
        config: RouterConfig | None = None,
        *,
        catalog: Catalog | None = None,
        encoder: Encoder | None = None,
        index: CatalogIndex | None = None,
    ) -> None:
        self.config = config or RouterConfig()
        self.catalog = catalog or (
            index.catalog if index else load_catalog(self.config.resolved_catalog())
        )
        self.index_warning = ''
        self._in_flight = 0
        self._in_flight_lock = threading.Lock()
        self._policy_lock = threading.RLock()
        if index is None:
            if encoder is None:
                e = self.config.encoder
                encoder = SentenceTransformerEncoder(
                    self.config.model, self.config.device, e.backend, e.threads, e.cache_size
                )
                # Concurrent requests share forward passes (micro-batching, bounded wait).
                s = self.config.serving
                encoder = BatchingEncoder(
                    encoder, s.batch_wait_ms, s.batch_max, expected=lambda: self._in_flight
                )
            index = self._open_index(encoder)
        self.index = index
        self.encoder = index.encoder
        self.screen = Screen(self.catalog.names)  # safety: injection-only text counts for nothing
        self._policies: dict[str, Policy] = {}
        self._extractor: Any = None  # shared by the lcr variants
        if self.config.policy not in POLICIES:
            raise RequestError(
                f'unknown default policy {self.config.policy!r}', hint=self.policy_hint()
            )
        self.policy(self.config.policy)  # build the default policy now, not on the first request
        if self.config.blas_threads:
            # After the model is loaded, so that its BLAS libraries are covered too.
            # Process-wide by design: see RouterConfig.blas_threads.
            from threadpoolctl import threadpool_limits

            # Keep the limiter: threadpoolctl restores the old limits when it is collected.
            self._blas_limit = threadpool_limits(limits=self.config.blas_threads, user_api='blas')

    def _open_index(self, encoder: Encoder) -> CatalogIndex:
        c = self.config
        if c.chroma_url:
            return CatalogIndex(
                self.catalog, encoder, open_client(url=c.chroma_url), c.chroma_prefix
            )
        if c.chroma_ephemeral:
            return CatalogIndex.ephemeral(self.catalog, encoder)
        path = c.chroma_path or str(ros_home() / 'tool_router' / 'chroma')
        try:
            return CatalogIndex(
                self.catalog, encoder, open_client(persist_dir=path), c.chroma_prefix
            )
        except IndexStoreError as exc:
            # Keep serving from memory; the persistent directory is left untouched for inspection.
            self.index_warning = f'persistent index unusable, serving from memory: {exc}'
            log.error(self.index_warning)
            return CatalogIndex.ephemeral(self.catalog, encoder)

    @staticmethod
    def policy_hint() -> str:
        return 'known policies: ' + ', '.join(sorted(POLICIES))

    def policy(self, name: str) -> Policy:
        name = name or self.config.policy
        with self._policy_lock:  # concurrent requests build a policy once
            if name not in self._policies:
                if name not in POLICIES:
                    raise RequestError(f'unknown policy {name!r}', hint=self.policy_hint())
                self._policies[name] = POLICIES[name](self)
            return self._policies[name]

    def reset_policies(self) -> None:
        """Forget built policies, e.g. after their constants changed."""
        self._policies.clear()

    def route(
        self, text: Any, policy: str = '', max_tools: int = 0, request_id: str = ''
    ) -> RouteResult:
        """Route one request; raise :class:`RequestError` for bad input."""
        start = time.perf_counter()
        text = check_text(text, self.config.max_text_length)
        if max_tools < 0:
            raise RequestError('max_tools must be >= 0')
        bound = min(max_tools or self.config.max_tools, len(self.catalog))
        chosen = self.policy(policy)
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
                decision = chosen.route(screened.text, bound)
        except ToolRouterError:
            raise
        except Exception as exc:  # noqa: BLE001 - a policy bug must not take the service down
            log.exception('policy %s failed', chosen.name)
            raise ToolRouterError(f'policy {chosen.name} failed: {exc}') from exc
        finally:
            with self._in_flight_lock:
                self._in_flight -= 1
        if screened.removed:
            decision.extra['safety'] = screened.summary()
        checked = validate_selection(decision.tools, decision.scores, self.catalog, bound)
        return RouteResult(
            request_id=request_id or uuid.uuid4().hex[:16],
            text=text,
            policy=chosen.name,
            tools=checked.tools,
            scores=checked.scores,
            dropped=checked.dropped,
            latency_ms=(time.perf_counter() - start) * 1000.0,
            fallback_used=bool(decision.extra.get('fallback_used', False)),
            fallback_reason=str(decision.extra.get('fallback_reason', '')),
            decision=decision,
        )

    def health(self) -> dict[str, str]:
        return {
            'model': self.encoder.model_id,
            'device': getattr(self.encoder, 'device', '?'),
            'catalog_size': str(len(self.catalog)),
            'default_policy': self.config.policy,
            **{f'index_{k}': v for k, v in self.index.health().items()},
            **({'index_warning': self.index_warning} if self.index_warning else {}),
        }
