"""Single-pass clause pooling (``lcr.clause_pooling``) against separate fragments: quality, cost.

    PYTHONPATH=. python benchmarks/clause_pooling.py [--dataset benchmarks/data/v2/dev.jsonl]
        [-n 200] [--json out.json] [--model-out pooled_model.json]
    PYTHONPATH=. python benchmarks/clause_pooling.py --smoke        # tiny sizes (CI)

For each setting, ``lcr`` is fitted exactly as ``tool-router fit lcr`` fits it (variant
``lcr`` only: 5-fold cross-validated thresholds on the development split, then the final
weights), and reported with its cross-validated dev figures. Then both fitted scorers route
the same development requests, interleaved with the floor (one forward pass of the request)
so that load changes hit all three alike: p50 over the floor, p99 over p50, forward passes per
request. Nothing here reads a test split, and the shipped ``config/lcr_model.json`` is never
written (``--model-out`` writes the pooled scorer elsewhere).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tool_router.common.stats import percentile as pct  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dev = ROOT / 'benchmarks' / 'data' / 'v2' / 'dev.jsonl'
    ap.add_argument('--dataset', type=Path, default=dev)
    ap.add_argument('-n', type=int, default=200, help='requests timed per setting')
    ap.add_argument('--limit', type=int, default=0, help='fit on the first N requests (0 = all)')
    ap.add_argument('--smoke', action='store_true', help='60 requests fitted, 8 timed')
    ap.add_argument('--json', type=Path)
    ap.add_argument('--model-out', type=Path, help='write the pooled scorer here')
    args = ap.parse_args()
    if args.smoke:
        args.limit, args.n = 60, 8
    os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
    from tool_router.routing.config import load_router_config
    from tool_router.evaluation.dataset import load_jsonl
    from tool_router.evaluation.fitting.lcr import fit_variant
    from tool_router.routing.policies.lcr import FeatureExtractor, LCRParams, LearnedClauseRouter
    from tool_router.routing.router import Router

    router = Router(load_router_config(overrides={'chroma_ephemeral': True}))
    examples = load_jsonl(args.dataset, router.catalog)
    if args.limit:
        examples = examples[: args.limit]
    out: dict[str, Any] = {'dataset': str(args.dataset.relative_to(ROOT)
                                          if args.dataset.is_relative_to(ROOT) else args.dataset),
                           'n_fit': len(examples), 'load_average_start': list(os.getloadavg())}
    tmp = Path(tempfile.mkdtemp(prefix='tr-pooling-'))
    policies = {}
    for pooling in (False, True):
        label = 'pooled' if pooling else 'fragments'
        extractor = FeatureExtractor(router.index, pooling=pooling)
        extractor.memoize()
        t0 = time.perf_counter()
        model = fit_variant(examples, extractor, 'lcr', args.dataset.name,
                            log=lambda m: print(m, file=sys.stderr),
                            max_tools=min(router.config.max_tools, len(router.catalog)))
        model = model.model_copy(update={'clause_pooling': pooling})
        out[f'{label}_fit_s'] = time.perf_counter() - t0
        out[f'{label}_cv_macro_composite'] = model.cv_macro_composite
        out[f'{label}_thresholds'] = [model.threshold, model.clause_threshold,
                                      model.scope_threshold]
        out[f'{label}_pooling_fallbacks'] = extractor.pooling_fallbacks
        path = tmp / f'{label}.json'
        path.write_text(json.dumps({'variants': {'lcr': model.model_dump()}}))
        if pooling and args.model_out:
            args.model_out.write_text(json.dumps(
                {'about': 'lcr fitted with clause_pooling by benchmarks/clause_pooling.py',
                 'dataset': args.dataset.name, 'n_requests': len(examples),
                 'variants': {'lcr': model.model_dump()}}, indent=1) + '\n')
        policies[label] = LearnedClauseRouter(
            router.index, LCRParams(model_path=str(path), clause_pooling=pooling), 'lcr',
            FeatureExtractor(router.index, pooling=pooling))
    inner = getattr(router.encoder, 'inner', router.encoder)
    texts = [examples[i % len(examples)].request for i in range(args.n)]

    def timed(fn: Any, text: str) -> float:
        t = time.perf_counter()
        fn(text)
        return (time.perf_counter() - t) * 1000.0

    for text in texts[:5]:
        for p in policies.values():
            p.route(text, 8)
    lat: dict[str, list[float]] = {'floor': [], 'fragments': [], 'pooled': []}
    passes = {label: 0 for label in policies}
    sequences = {label: 0 for label in policies}
    for text in texts:
        lat['floor'].append(timed(lambda t: inner.encode([t]), text))
        for label, p in policies.items():
            before = inner.passes
            lat[label].append(timed(lambda t, p=p: p.route(t, 8), text))
            passes[label] += inner.passes - before
            # Sequences the model ran: the distinct fragments, or the one request (pooled).
            fragments = p.route(text, 8).fragments
            sequences[label] += 1 if label == 'pooled' else len(set(fragments))
    out['floor_p50_ms'] = pct(lat['floor'], 50)
    for label in policies:
        out[f'{label}_p50_ms'] = pct(lat[label], 50)
        out[f'{label}_p99_ms'] = pct(lat[label], 99)
        out[f'{label}_over_floor'] = out[f'{label}_p50_ms'] / out['floor_p50_ms']
        out[f'{label}_p99_over_p50'] = out[f'{label}_p99_ms'] / out[f'{label}_p50_ms']
        out[f'{label}_passes_per_request'] = passes[label] / len(texts)
        out[f'{label}_sequences_per_request'] = sequences[label] / len(texts)
    out['n_timed'] = len(texts)
    out['load_average_end'] = list(os.getloadavg())
    print('| lcr | cv macro composite (dev) | p50 over floor | p99 over p50 | forward calls / '
          'sequences per request |')
    print('|---|---|---|---|---|')
    for label in policies:
        print(f"| {label} | {out[f'{label}_cv_macro_composite']:.4f} "
              f"| {out[f'{label}_over_floor']:.2f}x | {out[f'{label}_p99_over_p50']:.2f}x "
              f"| {out[f'{label}_passes_per_request']:.2f} / "
              f"{out[f'{label}_sequences_per_request']:.2f} |")
    print(json.dumps(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == '__main__':
    main()
