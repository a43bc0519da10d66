"""The condition benchmark: does the router attach, and the executor read, each gated condition?

    python benchmarks/conditions.py                                   # the dev file, lcr
    python benchmarks/conditions.py --dataset held_out.jsonl --out /tmp/cond.json
    python benchmarks/conditions.py --policy cdbv3

Routes every request of the file with the shipped router (the configured default policy,
``lcr``, on the shipped MiniLM; in-memory index), takes the condition text the router attached
to the case's gated tool, reads it as the executor does (``parse_condition`` with the route's
other tools as context and the configured places file) and scores the predicate or the refusal
(:mod:`tool_router.evaluation.conditions`). Prints accuracy overall and by shape, the requests
whose gated tool would run at once, and the confusion list; ``--out`` writes it all as JSON,
with one row per case.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run(dataset: Path, policy: str = '',
        overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Route and score every case; the summary with per-case rows under ``cases``."""
    from tool_router.evaluation import conditions as bench
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    cases = bench.load_cases(dataset)
    config = load_router_config(overrides={'chroma_ephemeral': True, **(overrides or {})})
    places = _places(config)
    results = []
    with Router(config) as router:
        for case in cases:
            result = router.route(case.request, policy)
            conditions = result.decision.conditions if result.decision else {}
            served = {t: c for t, c in conditions.items() if t in result.tools}
            results.append(bench.score_case(case, result.tools, served, **places))
        used = result.policy if cases else policy
    summary = bench.summarise(results)
    summary['dataset'] = str(dataset)
    summary['policy'] = used
    summary['cases'] = [r.model_dump() for r in results]
    return summary


def _places(config: Any) -> dict[str, Any]:
    """The named places the executor would know (none before places files existed)."""
    try:
        from tool_router.common.places import load_places
    except ImportError:
        return {}
    return {'places': load_places(getattr(config, 'places_file', '') or None)}


def main() -> int:
    from tool_router.evaluation.conditions import report_text

    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dataset', default=str(ROOT / 'benchmarks/data/conditions/dev.jsonl'))
    ap.add_argument('--policy', default='', help="policy to route with ('' = the configured)")
    ap.add_argument('--out', default='', help='write the summary and every case as JSON here')
    args = ap.parse_args()
    summary = run(Path(args.dataset), args.policy)
    print(f'{summary["dataset"]}  policy {summary["policy"]}')
    print(report_text(summary))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1, ensure_ascii=False) + '\n',
                                  encoding='utf-8')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
