"""Local policy first; the LLM only when the local decision looks uncertain.

Gate (``hybrid.gate = fitted``): the local decision is *uncertain* when any of

* ``Decision.confidence < gate_confidence`` (policies that report a confidence);
* the normalised margin between the last kept and the first dropped candidate,
  ``(s_last_kept - s_first_dropped) / s_top``, is below ``gate_margin``;
* the answer has at least ``gate_min_tools`` tools (a compound request);
* the local policy abstained and ``gate_on_abstain``.

The thresholds in ``config/router.yaml`` were fitted on the development split
only (``python -m tool_router.policies.hybrid fit-gate``, docs/LLM.md): the
gate that catches the most local errors while asking the LLM on at most the
target share of requests.

Merge rule:

* ``refine`` mode sends only the local top ``refine_top_k`` candidates (plus
  every locally kept tool); the LLM may only pick among them, other names are
  reported as invented and ignored;
* ``full`` mode sends the whole catalog; names outside it are ignored;
* ``merge = llm`` answers with the LLM's picks; ``merge = union`` adds the local
  tools whose score is at least ``keep_local_score``.

Degrade: when the LLM is disabled, the circuit is open, the deadline leaves
too little time, or the call times out, fails or returns an empty/unparseable
reply, the answer is the local decision, with ``extra['fallback_used'] = False``
and ``extra['fallback_reason']`` saying why. When the LLM's picks were used,
``fallback_used = True``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any, Iterable

import httpx

from tool_router.errors import RequestError
from tool_router.llm.settings import HybridParams, LLMParams, apply_environment
from tool_router.policies.base import Decision, Evidence
from tool_router.policies.llm import LLMConsultant

NOT_LOCAL = ('hybrid', 'llm')


def gate_signals(decision: Decision) -> dict[str, Any]:
    """Uncertainty signals of a local decision, from the Decision interface only."""
    ranked = sorted(decision.candidates, key=lambda kv: -kv[1])
    top = ranked[0][1] if ranked else 0.0
    score = dict(ranked)
    kept = set(decision.tools)
    last_kept = min((score.get(t, top) for t in decision.tools), default=0.0)
    first_dropped = max((s for t, s in ranked if t not in kept), default=0.0)
    margin = (last_kept - first_dropped) / top if top > 0 and decision.tools else 0.0
    return {
        'confidence': round(float(decision.confidence), 4),
        'margin': round(max(0.0, margin), 4),
        'n_tools': len(decision.tools),
        'abstained': bool(decision.abstained or not decision.tools),
    }


def uncertain(signals: dict[str, Any], p: HybridParams) -> tuple[bool, str]:
    """(ask the LLM?, why) for the configured gate."""
    if p.gate == 'always':
        return True, 'gate always'
    if p.gate == 'never':
        return False, 'gate never'
    why = []
    if signals['abstained'] and p.gate_on_abstain:
        why.append('local policy abstained')
    if signals['confidence'] < p.gate_confidence:
        why.append(f"confidence {signals['confidence']:.2f} < {p.gate_confidence}")
    if not signals['abstained'] and signals['margin'] < p.gate_margin:
        why.append(f"margin {signals['margin']:.3f} < {p.gate_margin}")
    if signals['n_tools'] >= p.gate_min_tools:
        why.append(f"{signals['n_tools']} tools >= {p.gate_min_tools}")
    return bool(why), '; '.join(why) if why else 'local decision confident'


class HybridPolicy:
    """Local default policy, refined by an LLM on uncertain requests, within a deadline."""

    name = 'hybrid'

    def __init__(
        self,
        router: Any,
        params: HybridParams | None = None,
        llm: LLMParams | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.router = router
        self.params = params or HybridParams()
        self.consultant = LLMConsultant(router.catalog, llm or LLMParams(), transport=transport)

    @classmethod
    def from_router(cls, router: Any) -> 'HybridPolicy':
        """Build from the router's configuration, environment overrides applied."""
        return cls(router, router.config.hybrid, apply_environment(router.config.llm))

    def local_name(self) -> str:
        """The local policy, looked up at call time (the default may change)."""
        name = self.params.local_policy or self.router.config.policy
        if name in NOT_LOCAL:
            raise RequestError(
                f'hybrid.local_policy resolves to {name!r}, which is not a local policy',
                hint="set hybrid.local_policy, e.g. 'cdbv3'",
            )
        return name

    def shortlist(self, local: Decision) -> list[str]:
        """Refine mode: every locally kept tool, then the best other candidates, up to top-k."""
        catalog = self.router.catalog
        out = [t for t in local.tools if t in catalog]
        for tool, _ in sorted(local.candidates, key=lambda kv: -kv[1]):
            if len(out) >= max(self.params.refine_top_k, len(local.tools)):
                break
            if tool in catalog and tool not in out:
                out.append(tool)
        return out

    def route(self, text: str, max_tools: int) -> Decision:
        """Route locally; consult the LLM when uncertain and time allows; merge or degrade."""
        start = time.perf_counter()
        p = self.params
        local_name = self.local_name()
        local = self.router.policy(local_name).route(text, max_tools)
        signals = gate_signals(local)
        extra: dict[str, Any] = {
            'local_policy': local_name,
            'local_tools': list(local.tools),
            'gate': signals,
        }
        if not self.consultant.enabled:
            return self._degrade(local, extra, self.consultant.disabled_reason)
        ask, why = uncertain(signals, p)
        extra['gate']['reason'] = why
        if not ask:
            return self._degrade(local, extra, f'LLM not needed: {why}')
        left_ms = p.deadline_ms - (time.perf_counter() - start) * 1000.0
        if left_ms < p.min_llm_budget_ms:
            return self._degrade(local, extra, f'deadline: {left_ms:.0f} ms left, LLM skipped')
        names = self.shortlist(local) if p.mode == 'refine' else None
        if names is not None and not names:
            names = None  # nothing to refine (local abstained without candidates): full catalog
        got = self.consultant.consult(text, names, left_ms / 1000.0)
        extra['llm'] = got.facts
        extra['llm_mode'] = 'refine' if names is not None else 'full'
        if not got.usable:
            return self._degrade(local, extra, got.reason)
        return self._merge(local, got.tools, names, extra, why)

    def _degrade(self, local: Decision, extra: dict[str, Any], reason: str) -> Decision:
        if 'llm' not in extra:  # no call attempted: nothing for the LLM statistics
            extra['llm_skipped'] = reason
        extra.update(fallback_used=False, fallback_reason=reason)
        return dataclasses.replace(
            local, policy=self.name, extra={**local.extra, **extra}, note=local.note or reason
        )

    def _merge(
        self,
        local: Decision,
        picks: Iterable[str],
        names: list[str] | None,
        extra: dict[str, Any],
        why: str,
    ) -> Decision:
        allowed = set(names) if names is not None else set(self.router.catalog.names)
        score = dict(local.candidates)
        chosen = [t for t in picks if t in allowed]
        extra['llm']['ignored'] = [t for t in picks if t not in allowed]
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
        extra.update(fallback_used=True, fallback_reason=f'LLM consulted ({why})')
        return dataclasses.replace(
            local,
            policy=self.name,
            tools=chosen,
            scores=[round(float(score.get(t, 0.0)), 4) for t in chosen],
            evidence=evidence,
            abstained=not chosen,
            clause_index={t: i for t, i in local.clause_index.items() if t in chosen},
            conditions={t: c for t, c in local.conditions.items() if t in chosen},
            note=f'LLM {extra["llm_mode"]} over {len(allowed)} tools',
            extra={**local.extra, **extra},
        )

    def close(self) -> None:
        """Release the HTTP client."""
        self.consultant.close()


# --- fitting the gate on the development split -------------------------------------------------


def composite(pred: Iterable[str], truth: Iterable[str]) -> float:
    """ANNOTATION.md's composite L for one request (out-of-scope: 1 when empty)."""
    p, t = set(pred), set(truth)
    if not t:
        return 1.0 if not p else 0.0
    c = len(p & t) / len(t)
    pr = len(p & t) / len(p) if p else 0.0
    return 0.5 * c + 0.25 * pr + 0.25 * float(p == t)


def fit_gate(rows: list[dict[str, Any]], target_rate: float) -> dict[str, Any]:
    """Thresholds that catch the most local loss (1 - L) asking on at most ``target_rate``.

    ``rows``: one per dev request with the ``gate_signals`` keys and ``loss``.
    """
    n = len(rows)
    margins = sorted({r['margin'] for r in rows}) + [1.01]
    confs = sorted({r['confidence'] for r in rows} | {0.0})
    best: dict[str, Any] = {}
    for on_abstain in (False, True):
        for min_tools in range(2, 10):
            for conf in confs:
                for margin in [0.0] + margins:
                    p = HybridParams(
                        gate_margin=min(1.0, margin),
                        gate_confidence=conf,
                        gate_min_tools=min_tools,
                        gate_on_abstain=on_abstain,
                    )
                    fired = [r for r in rows if uncertain(r, p)[0]]
                    rate = len(fired) / n
                    if rate > target_rate:
                        continue
                    caught = sum(r['loss'] for r in fired)
                    key = (round(caught, 6), -rate)
                    if not best or key > best['key']:
                        best = {
                            'key': key,
                            'gate_margin': round(min(1.0, margin), 4),
                            'gate_confidence': conf,
                            'gate_min_tools': min_tools,
                            'gate_on_abstain': on_abstain,
                            'call_rate': round(rate, 4),
                            'loss_caught': round(
                                caught / max(1e-9, sum(r['loss'] for r in rows)), 4
                            ),
                            'wrong_caught': sum(1 for r in fired if r['loss'] > 0),
                            'wrong_total': sum(1 for r in rows if r['loss'] > 0),
                            'error_rate_fired': round(
                                sum(r['loss'] > 0 for r in fired) / max(1, len(fired)), 4
                            ),
                            'error_rate_all': round(sum(r['loss'] > 0 for r in rows) / n, 4),
                        }
    best.pop('key', None)
    return best


def _fit_main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog='python -m tool_router.policies.hybrid fit-gate',
        description='Fit the hybrid gate on the development split.',
    )
    ap.add_argument('command', choices=['fit-gate'])
    ap.add_argument('--dev', default='benchmarks/data/dev.jsonl')
    ap.add_argument('--target-rate', type=float, default=0.3)
    ap.add_argument('--policy', default='', help='local policy (default: the configured one)')
    args = ap.parse_args(argv)
    if Path(args.dev).name.startswith('test'):
        print('refusing to fit on a test split', file=sys.stderr)
        return 2
    from tool_router.config import load_router_config
    from tool_router.router import Router

    router = Router(load_router_config(overrides={'chroma_ephemeral': True}))
    name = args.policy or router.config.policy
    rows = []
    for line in Path(args.dev).read_text(encoding='utf-8').splitlines():
        if line.strip():
            ex = json.loads(line)
            decision = router.policy(name).route(ex['request'], router.config.max_tools)
            rows.append(
                {**gate_signals(decision), 'loss': 1.0 - composite(decision.tools, ex['tools'])}
            )
    print(
        json.dumps(
            {
                'policy': name,
                'n': len(rows),
                'target_rate': args.target_rate,
                **fit_gate(rows, args.target_rate),
            },
            indent=2,
        )
    )
    return 0


if __name__ == '__main__':
    raise SystemExit(_fit_main())
