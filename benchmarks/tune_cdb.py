"""Choose the CDB constants the paper does not give, on the development split only.

    PYTHONPATH=. python benchmarks/tune_cdb.py benchmarks/data/dev.jsonl [cdbv1,cdbv2,cdbv3]

Ranks grid points by the dev macro composite (the paper's metric: the CDB
routers were designed for in-scope routing and are given their best in-scope
constants) and prints the out-of-scope empty rate beside it; the best values
are copied into config/router.yaml by hand and recorded in docs/CONSTANTS.md.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from tool_router.config import load_router_config
from tool_router.evaluation.dataset import load_jsonl
from tool_router.fit import objective
from tool_router.router import Router

GRIDS = {
    'cdbv1': {'max_distance': [1.2, 1.4, 1.6, 1.8, 2.0]},
    'cdbv2': {'margin': [0.05, 0.1, 0.2, 0.3, 0.4]},
    'cdbv3': {
        'sim_floor': [0.2, 0.25, 0.3],
        'lexical_weight': [0.0, 0.15, 0.3],
        'gap_mode': ['consecutive', 'top'],
    },
}


def main(path: str, policies: list[str]) -> None:
    if 'test' in Path(path).name:
        raise SystemExit('tune on the development split only')
    router = Router(load_router_config(overrides={'chroma_ephemeral': True, 'policy': 'cdbv3'}))
    examples = load_jsonl(path, router.catalog)
    for policy in policies:
        grid = GRIDS[policy]
        results = []
        for values in itertools.product(*grid.values()):
            params = dict(zip(grid, values))
            setattr(
                router.config, policy, getattr(router.config, policy).model_copy(update=params)
            )
            router.reset_policies()
            preds = [set(router.route(ex.request, policy).tools) for ex in examples]
            results.append((objective(examples, preds), params))
        for (_, macro, oos), params in sorted(results, key=lambda r: -r[0][1])[:3]:
            print(
                f'{policy} {params}: dev macro composite {macro:.4f}, '
                f'out-of-scope empty {oos:.3f}',
                flush=True,
            )


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2].split(',') if len(sys.argv) > 2 else list(GRIDS))
