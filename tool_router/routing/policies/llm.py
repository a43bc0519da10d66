"""The source paper's direct LLM baseline as a policy, and the consultation it is built on.

``llm`` sends the full catalog (names, kinds, summaries), the annotation rules
and the request to a chat model, asks for ``{"tools": [...]}`` and parses the
reply (JSON, then a regex fallback). Empty or unparseable replies, timeouts
and errors yield no tools; invented names stay in ``Decision.tools`` so the
router's allowlist drops them into ``RouteResult.dropped`` and the evaluation
counts them as false positives.

Every decision carries the per-call facts in ``Decision.llm``
(:class:`~tool_router.common.explanation.LLMFacts`): ``sent`` (data left the
vehicle), ``host``, ``provider``, ``model``, ``duration_ms``, ``timeout``,
``malformed``, ``invented``, ``error``, plus ``redacted`` (spans removed),
``prompt_tools`` and ``circuit`` (breaker state).
No remote call is made unless ``llm.url`` is set and ``llm.allow_remote`` is true.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import httpx

from tool_router.common.catalog import Catalog
from tool_router.common.explanation import LLMFacts
from tool_router.routing.llm.client import CIRCUIT_OPEN, TIMEOUT, LLMCallError, LLMClient
from tool_router.routing.llm.parse import parse_reply
from tool_router.routing.llm.prompt import system_prompt, user_prompt
from tool_router.common.redact import redact
from tool_router.routing.llm.settings import LLMParams, apply_environment
from tool_router.routing.policies.base import Decision, Evidence

if TYPE_CHECKING:
    from tool_router.routing.policies.registry import PolicyContext

log = logging.getLogger(__name__)


@dataclass
class Consultation:
    """One attempt to ask the model: the names it chose and the facts for the trace."""

    tools: list[str] = field(default_factory=list)
    usable: bool = False  # a reply was received and parsed (possibly by the fallback)
    reason: str = ''  # why it is not usable, or how it was parsed
    facts: LLMFacts = field(default_factory=LLMFacts)


class LLMConsultant:
    """Builds the prompt, calls the client, parses the reply. Never raises for model failures."""

    def __init__(
        self, catalog: Catalog, params: LLMParams, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.catalog, self.params = catalog, params
        self.enabled, self.disabled_reason = params.enabled()
        self.client = LLMClient(params, transport=transport) if self.enabled else None

    def _facts(self) -> LLMFacts:
        return LLMFacts(
            host=self.params.host() if self.enabled else '',
            provider=self.params.provider,
            model=self.params.model,
            circuit=self.client.breaker.state if self.client else 'closed',
        )

    def consult(
        self,
        text: str,
        names: Sequence[str] | None = None,
        budget_s: float | None = None,
        *,
        deadline: float | None = None,
    ) -> Consultation:
        """Ask the model to choose among ``names`` (default: the whole catalog).

        ``deadline`` (``time.monotonic()``) ends the exchange at that instant, the
        prompt building included; ``budget_s`` counts from the call itself.
        """
        facts = self._facts()
        if self.client is None:
            facts.error = self.disabled_reason
            return Consultation(reason=self.disabled_reason, facts=facts)
        facts.prompt_tools = len(list(names)) if names is not None else len(self.catalog)
        sent = text
        if self.params.redact:
            red = redact(text, self.params.names_to_redact())
            sent, facts.redacted = red.text, red.count
        try:
            # Parsed on the client's worker, inside the budget (invented = not in the catalog).
            reply = self.client.chat(
                system_prompt(self.catalog, names),
                user_prompt(sent),
                budget_s,
                parse=lambda reply_text: parse_reply(reply_text, self.catalog.names),
                deadline=deadline,
            )
        except LLMCallError as exc:
            # circuit open: nothing was sent; any other failure: the request did go out.
            facts.sent = exc.kind != CIRCUIT_OPEN
            facts.timeout = exc.kind == TIMEOUT
            facts.error = f'{exc.kind}: {exc}'
            facts.circuit = self.client.breaker.state
            log.warning('LLM call failed: %s', facts.error)
            return Consultation(reason=f'LLM {exc.kind}: {exc}', facts=facts)
        facts.sent, facts.duration_ms = True, round(reply.duration_ms, 3)
        facts.circuit = self.client.breaker.state
        parsed = reply.parsed
        facts.malformed, facts.invented = parsed.malformed, list(parsed.invented)
        if not parsed.tools and parsed.reason in ('empty reply', 'unparseable reply'):
            facts.error = parsed.reason
            return Consultation(reason=f'LLM {parsed.reason}', facts=facts)
        return Consultation(parsed.tools, True, parsed.reason or 'clean JSON reply', facts)

    def close(self) -> None:
        """Release the HTTP client."""
        if self.client is not None:
            self.client.close()


class LLMPolicy:
    """Direct LLM routing over the full catalog (the paper's 120B baseline)."""

    name = 'llm'

    def __init__(self, consultant: LLMConsultant) -> None:
        self.consultant = consultant

    def route(self, text: str, max_tools: int) -> Decision:
        """Ask the model; failures give an empty, explained answer."""
        got = self.consultant.consult(text)
        tools = got.tools
        return Decision(
            self.name,
            list(tools),
            [1.0] * len(tools),
            fragments=[text],
            evidence={t: [Evidence('llm', '', 'selected by the model', 1.0)] for t in tools},
            candidates=[(t, 1.0) for t in tools],
            confidence=1.0 if got.usable else 0.0,
            abstained=not tools,
            note=got.reason,
            fallback_reason='' if got.usable else got.reason,
            llm=got.facts,
        )

    def close(self) -> None:
        """Release the HTTP client."""
        self.consultant.close()


def consultant(
    ctx: 'PolicyContext', transport: httpx.BaseTransport | None = None
) -> LLMConsultant:
    """An LLM consultant from the router's ``llm`` section, environment overrides applied."""
    return LLMConsultant(
        ctx.catalog, apply_environment(ctx.params(LLMParams, 'llm')), transport=transport
    )


def build(ctx: 'PolicyContext') -> LLMPolicy:
    """The registry's factory for ``llm``."""
    return LLMPolicy(consultant(ctx))
