"""Local policy first; the LLM only when the local decision looks uncertain.

Gate (``hybrid.gate = fitted``): the local decision is *uncertain* when any of

* ``Decision.confidence < gate_confidence`` (policies that report a confidence);
* the normalised margin between the last kept and the first dropped candidate,
  ``(s_last_kept - s_first_dropped) / s_top``, is below ``gate_margin``;
* the answer has at least ``gate_min_tools`` tools (a compound request);
* the local policy abstained and ``gate_on_abstain``.

The thresholds in ``config/router.yaml`` were fitted on the development split
only (``tool-router fit gate``, :mod:`tool_router.evaluation.fitting.gate`,
docs/LLM.md): the gate that catches the most local errors while asking the
LLM on at most the target share of requests. The gate looks at the local
decision as the router will serve it (cut to ``max_tools``).

Merge rule:

* ``refine`` mode sends only the local top ``refine_top_k`` candidates (plus
  every locally kept tool); the LLM may only pick among them, other names are
  reported as invented and ignored;
* ``full`` mode sends the whole catalog; names outside it are ignored;
* ``merge = llm`` answers with the LLM's picks; ``merge = union`` adds the local
  tools whose score is at least ``keep_local_score``.

Degrade: when the LLM is disabled, the circuit is open, the deadline leaves
too little time, or the call times out, fails or returns an empty/unparseable
reply, the answer is the local decision, with ``Decision.fallback_used = False``
and ``fallback_reason`` saying why. When the LLM's picks were used,
``fallback_used = True``. ``Decision.hybrid`` and ``Decision.llm`` hold the facts.

The policy is handed its local policy and an :class:`LLMConsultant` by its
factory (:func:`build`); it never sees the router.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Iterable

from tool_router.common.catalog import Catalog
from tool_router.common.errors import RequestError
from tool_router.common.explanation import GateSignals, HybridFacts, LLMFacts
from tool_router.routing.llm.settings import HybridParams
from tool_router.routing.policies.base import Decision, Evidence, Policy, request_started
from tool_router.routing.policies.llm import LLMConsultant, consultant

if TYPE_CHECKING:
    from tool_router.routing.policies.registry import PolicyContext


def gate_signals(decision: Decision) -> GateSignals:
    """Uncertainty signals of a local decision, from the Decision interface only."""
    ranked = sorted(decision.candidates, key=lambda kv: -kv[1])
    top = ranked[0][1] if ranked else 0.0
    score = dict(ranked)
    kept = set(decision.tools)
    last_kept = min((score.get(t, top) for t in decision.tools), default=0.0)
    first_dropped = max((s for t, s in ranked if t not in kept), default=0.0)
    margin = (last_kept - first_dropped) / top if top > 0 and decision.tools else 0.0
    return GateSignals(
        confidence=round(float(decision.confidence), 4),
        margin=round(max(0.0, margin), 4),
        n_tools=len(decision.tools),
        abstained=bool(decision.abstained or not decision.tools),
    )


def uncertain(signals: GateSignals, p: HybridParams) -> tuple[bool, str]:
    """(ask the LLM?, why) for the configured gate."""
    if p.gate == 'always':
        return True, 'gate always'
    if p.gate == 'never':
        return False, 'gate never'
    why = []
    if signals.abstained and p.gate_on_abstain:
        why.append('local policy abstained')
    if signals.confidence < p.gate_confidence:
        why.append(f'confidence {signals.confidence:.2f} < {p.gate_confidence}')
    if not signals.abstained and signals.margin < p.gate_margin:
        why.append(f'margin {signals.margin:.3f} < {p.gate_margin}')
    if signals.n_tools >= p.gate_min_tools:
        why.append(f'{signals.n_tools} tools >= {p.gate_min_tools}')
    return bool(why), '; '.join(why) if why else 'local decision confident'


class HybridPolicy:
    """A local policy, refined by an LLM on uncertain requests, within a deadline."""

    name = 'hybrid'

    def __init__(
        self,
        local: Policy,
        consultant: LLMConsultant,
        catalog: Catalog,
        params: HybridParams | None = None,
    ) -> None:
        self.local = local
        self.consultant = consultant
        self.catalog = catalog
        self.params = params or HybridParams()

    def shortlist(self, local: Decision) -> list[str]:
        """Refine mode: every locally kept tool, then the best other candidates, up to top-k."""
        out = [t for t in local.tools if t in self.catalog]
        for tool, _ in sorted(local.candidates, key=lambda kv: -kv[1]):
            if len(out) >= max(self.params.refine_top_k, len(local.tools)):
                break
            if tool in self.catalog and tool not in out:
                out.append(tool)
        return out

    def route(self, text: str, max_tools: int) -> Decision:
        """Route locally; consult the LLM when uncertain and time allows; merge or degrade.

        The deadline counts from the request's arrival at the router (before this
        policy ran) and ends the LLM call at one absolute instant, prompt building
        included.
        """
        start = request_started()
        p = self.params
        answer = self.local.route(text, max_tools)
        local = answer.capped(max_tools)  # the gate judges what the router would serve
        signals = gate_signals(local)
        facts = HybridFacts(local_policy=self.local.name, local_tools=list(local.tools),
                            gate=signals)
        if not self.consultant.enabled:
            return self._degrade(answer, facts, self.consultant.disabled_reason)
        ask, why = uncertain(signals, p)
        facts.gate_reason = why
        if not ask:
            return self._degrade(answer, facts, f'LLM not needed: {why}')
        left_ms = p.deadline_ms - (time.perf_counter() - start) * 1000.0
        if left_ms < p.min_llm_budget_ms:
            return self._degrade(answer, facts, f'deadline: {left_ms:.0f} ms left, LLM skipped')
        names = self.shortlist(local) if p.mode == 'refine' else None
        if names is not None and not names:
            names = None  # nothing to refine (local abstained without candidates): full catalog
        got = self.consultant.consult(text, names, deadline=time.monotonic() + left_ms / 1000.0)
        facts.llm_mode = 'refine' if names is not None else 'full'
        if not got.usable:
            return self._degrade(answer, facts, got.reason, got.facts)
        return self._merge(local, got.tools, names, facts, got.facts, why)

    def _degrade(
        self, local: Decision, facts: HybridFacts, reason: str, llm: LLMFacts | None = None
    ) -> Decision:
        if llm is None:  # no call attempted: nothing for the LLM statistics
            facts.llm_skipped = reason
        return dataclasses.replace(
            local,
            policy=self.name,
            note=local.note or reason,
            fallback_used=False,
            fallback_reason=reason,
            llm=llm,
            hybrid=facts,
        )

    def _merge(
        self,
        local: Decision,
        picks: Iterable[str],
        names: list[str] | None,
        facts: HybridFacts,
        llm: LLMFacts,
        why: str,
    ) -> Decision:
        allowed = set(names) if names is not None else set(self.catalog.names)
        score = dict(local.candidates)
        picks = list(picks)
        chosen = [t for t in picks if t in allowed]
        llm.ignored = [t for t in picks if t not in allowed]
        if self.params.merge == 'union':
            local_score = dict(zip(local.tools, local.scores))
            chosen += [
                t
                for t in local.tools
                if t not in chosen and local_score.get(t, 0.0) >= self.params.keep_local_score
            ]
        evidence = {t: list(local.evidence.get(t, [])) for t in chosen}
        for tool in chosen:
            evidence[tool].insert(0, Evidence('llm', '', 'selected by the model', 1.0))
        return dataclasses.replace(
            local,
            policy=self.name,
            tools=chosen,
            scores=[round(float(score.get(t, 0.0)), 4) for t in chosen],
            evidence=evidence,
            abstained=not chosen,
            clause_index={t: i for t, i in local.clause_index.items() if t in chosen},
            conditions={t: c for t, c in local.conditions.items() if t in chosen},
            note=f'LLM {facts.llm_mode} over {len(allowed)} tools',
            fallback_used=True,
            fallback_reason=f'LLM consulted ({why})',
            llm=llm,
            hybrid=facts,
        )

    def close(self) -> None:
        """Release the HTTP client."""
        self.consultant.close()


def build(ctx: 'PolicyContext') -> HybridPolicy:
    """The registry's factory: the configured local policy and an LLM consultant."""
    params = ctx.params(HybridParams)
    name = params.local_policy or ctx.config.policy
    if name not in ctx.registry or not ctx.registry.get(name).local:
        raise RequestError(
            f'hybrid.local_policy resolves to {name!r}, which is not a local policy',
            hint="set hybrid.local_policy, e.g. 'cdbv3'",
        )
    return HybridPolicy(ctx.policy(name), consultant(ctx), ctx.catalog, params)
