"""``tool-router fit cdb``: choose the CDB constants the paper does not give, on dev only.

Ranks grid points by the dev macro composite (the paper's metric: the CDB
routers were designed for in-scope routing and are given their best in-scope
constants) and prints the out-of-scope empty rate beside it; the best values
are copied into config/router.yaml by hand and recorded in docs/CONSTANTS.md.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Callable, Sequence

from tool_router.evaluation.dataset import load_jsonl
from tool_router.evaluation.fitting.guard import refuse_reporting_data
from tool_router.evaluation.fitting.objective import objective

GRIDS: dict[str, dict[str, list[Any]]] = {
    'cdbv1': {'max_distance': [1.2, 1.4, 1.6, 1.8, 2.0]},
    'cdbv2': {'margin': [0.05, 0.1, 0.2, 0.3, 0.4]},
    'cdbv3': {
        'sim_floor': [0.2, 0.25, 0.3],
        'lexical_weight': [0.0, 0.15, 0.3],
        'gap_mode': ['consecutive', 'top'],
    },
}


def tune(
    router: Any,
    dataset: Path,
    policies: Sequence[str],
    top: int = 3,
    progress: Callable[[Any, str], Any] = lambda items, desc: items,
) -> dict[str, list[tuple[dict[str, Any], float, float]]]:
    """Map policy -> the ``top`` grid points as (params, dev macro composite, oos empty rate)."""
    examples = load_jsonl(dataset, router.catalog)
    refuse_reporting_data(examples, str(dataset))
    out = {}
    for policy in policies:
        grid = GRIDS[policy]
        results = []
        for values in progress(list(itertools.product(*grid.values())), policy):
            params = dict(zip(grid, values))
            section = getattr(router.config, policy).model_copy(update=params)
            router.reconfigure(router.config.model_copy(update={policy: section}))
            preds = [set(router.route(ex.request, policy).tools) for ex in examples]
            _, macro, oos = objective(examples, preds)
            results.append((params, macro, oos))
        out[policy] = sorted(results, key=lambda r: -r[1])[:top]
    return out
