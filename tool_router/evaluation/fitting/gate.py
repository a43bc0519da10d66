"""``tool-router fit gate``: fit the hybrid policy's gate on the development split.

The gate (:mod:`tool_router.policies.hybrid`) asks the LLM when the local
decision looks uncertain. This chooses the thresholds that catch the most
local loss (1 - composite) while asking on at most ``target_rate`` of the
requests; the local decisions are cut to the router's ``max_tools``, as served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from tool_router.evaluation.dataset import load_jsonl
from tool_router.evaluation.fitting.guard import refuse_reporting_data
from tool_router.evaluation.metrics import composite
from tool_router.explanation import GateSignals
from tool_router.llm.settings import HybridParams
from tool_router.policies.hybrid import gate_signals, uncertain

Row = tuple[GateSignals, float]  # the gate's signals of one request, and the local loss


def fit_gate(rows: Sequence[Row], target_rate: float) -> dict[str, Any]:
    """Thresholds that catch the most local loss asking on at most ``target_rate``."""
    n = len(rows)
    total_loss = sum(loss for _, loss in rows)
    margins = sorted({s.margin for s, _ in rows}) + [1.01]
    confs = sorted({s.confidence for s, _ in rows} | {0.0})
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
                    fired = [(s, loss) for s, loss in rows if uncertain(s, p)[0]]
                    rate = len(fired) / n
                    if rate > target_rate:
                        continue
                    caught = sum(loss for _, loss in fired)
                    key = (round(caught, 6), -rate)
                    if not best or key > best['key']:
                        best = {
                            'key': key,
                            'gate_margin': round(min(1.0, margin), 4),
                            'gate_confidence': conf,
                            'gate_min_tools': min_tools,
                            'gate_on_abstain': on_abstain,
                            'call_rate': round(rate, 4),
                            'loss_caught': round(caught / max(1e-9, total_loss), 4),
                            'wrong_caught': sum(1 for _, loss in fired if loss > 0),
                            'wrong_total': sum(1 for _, loss in rows if loss > 0),
                            'error_rate_fired': round(
                                sum(loss > 0 for _, loss in fired) / max(1, len(fired)), 4
                            ),
                            'error_rate_all': round(sum(loss > 0 for _, loss in rows) / n, 4),
                        }
    best.pop('key', None)
    return best


def gate_rows(
    router: Any, dataset: Path, policy: str, progress: Callable[[Any], Any] = iter
) -> list[Row]:
    """Route every request of ``dataset`` with the local ``policy``; refuses test-split data."""
    examples = load_jsonl(dataset, router.catalog)
    refuse_reporting_data(examples, str(dataset))
    rows = []
    local = router.policy(policy)
    bound = min(router.config.max_tools, len(router.catalog))
    for ex in progress(examples):
        decision = local.route(ex.request, bound).capped(bound)
        rows.append((gate_signals(decision), 1.0 - composite(ex.tools, decision.tools)))
    return rows
