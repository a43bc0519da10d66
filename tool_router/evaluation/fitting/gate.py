"""``tool-router fit gate``: fit the hybrid policy's gate on the development split.

The gate (:mod:`tool_router.routing.policies.hybrid`) asks the LLM when the local
decision looks uncertain. This chooses the thresholds that catch the most
local loss (1 - composite) while asking on at most ``target_rate`` of the
requests; the local decisions are cut to the router's ``max_tools``, as served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from tool_router.evaluation.dataset import load_jsonl
from tool_router.evaluation.fitting.encoder import writer_folds
from tool_router.evaluation.fitting.guard import refuse_reporting_data
from tool_router.evaluation.metrics import composite
from tool_router.common.explanation import GateSignals
from tool_router.routing.policies.hybrid import gate_signals

Row = tuple[GateSignals, float]  # the gate's signals of one request, and the local loss


GRID = 200  # at most this many candidate values per threshold (quantiles beyond it)


def _candidates(values: Sequence[float]) -> list[float]:
    """Every observed value, or ``GRID`` quantiles of them on a large dataset."""
    import numpy as np

    unique = sorted(set(values))
    if len(unique) <= GRID:
        return unique
    return sorted({float(v) for v in np.quantile(unique, np.linspace(0.0, 1.0, GRID))})


def fit_gate(rows: Sequence[Row], target_rate: float) -> dict[str, Any]:
    """Thresholds that catch the most local loss asking on at most ``target_rate``.

    The gate's rule is :func:`tool_router.routing.policies.hybrid.uncertain`, evaluated here on
    arrays (``test_gate.py`` checks the two agree); a threshold's candidates are the observed
    values (``GRID`` quantiles of them on a large dataset).
    """
    import numpy as np

    n = len(rows)
    conf = np.array([s.confidence for s, _ in rows], dtype=np.float64)
    margin = np.array([s.margin for s, _ in rows], dtype=np.float64)
    n_tools = np.array([s.n_tools for s, _ in rows])
    abstained = np.array([s.abstained for s, _ in rows], dtype=bool)
    loss = np.array([loss for _, loss in rows], dtype=np.float64)
    total_loss = float(loss.sum())
    margins = _candidates(margin.tolist()) + [1.01]
    confs = _candidates([*conf.tolist(), 0.0])
    below_conf = [conf < c for c in confs]
    below_margin = [~abstained & (margin < min(1.0, m)) for m in [0.0] + margins]
    best: dict[str, Any] = {}
    for on_abstain in (False, True):
        for min_tools in range(2, 10):
            base = (abstained & on_abstain) | (n_tools >= min_tools)
            for c, low_conf in zip(confs, below_conf):
                partial = base | low_conf
                for m, low_margin in zip([0.0] + margins, below_margin):
                    fired = partial | low_margin
                    count = int(fired.sum())
                    rate = count / n
                    if rate > target_rate:
                        continue
                    caught = float(loss[fired].sum())
                    key = (round(caught, 6), -rate)
                    if not best or key > best['key']:
                        best = {
                            'key': key,
                            'gate_margin': round(min(1.0, m), 4),
                            'gate_confidence': c,
                            'gate_min_tools': min_tools,
                            'gate_on_abstain': on_abstain,
                            'call_rate': round(rate, 4),
                            'loss_caught': round(caught / max(1e-9, total_loss), 4),
                            'wrong_caught': int((loss[fired] > 0).sum()),
                            'wrong_total': int((loss > 0).sum()),
                            'error_rate_fired': round(
                                float((loss[fired] > 0).sum()) / max(1, count), 4
                            ),
                            'error_rate_all': round(float((loss > 0).sum()) / n, 4),
                        }
    best.pop('key', None)
    return best


MEMORY_FOLDS = 4  # writer folds of lcr's exemplar memory while the gate's rows are routed


def gate_rows(
    router: Any, dataset: Path, policy: str, progress: Callable[[Any], Any] = iter
) -> list[Row]:
    """Route every request of ``dataset`` with the local ``policy``; refuses test-split data.

    lcr's exemplar memory holds the development requests the gate is fitted on; routed with it
    whole, each would find itself and answer with a confidence no request gets in the field.
    So each request is routed with the memory less its writer's requests (writer folds, as in
    ``fit lcr``): the memory an unseen writer meets.
    """
    examples = load_jsonl(dataset, router.catalog)
    refuse_reporting_data(examples, str(dataset))
    rows = []
    local = router.policy(policy)
    bound = min(router.config.max_tools, len(router.catalog))
    extractor = getattr(getattr(local, 'local', local), 'extractor', None)
    memory = getattr(extractor, 'memory', None)
    fold = writer_folds(examples, MEMORY_FOLDS) if memory is not None else {}
    views = [memory.without(lambda s, k=k: fold.get(s) == k) for k in range(MEMORY_FOLDS)] \
        if memory is not None else []
    try:
        for ex in progress(examples):
            if views and extractor is not None:
                extractor.memory = views[fold[ex.id]]
            decision = local.route(ex.request, bound).capped(bound)
            rows.append((gate_signals(decision), 1.0 - composite(ex.tools, decision.tools)))
    finally:
        if views and extractor is not None:
            extractor.memory = memory
    return rows
