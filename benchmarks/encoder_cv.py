"""Does fine-tuning the encoder help lcr? 5-fold cross-validation on the dev split only.

For each fold k of ``benchmarks/data/v2/dev.jsonl`` (the same seeded fold
assignment for every arm): fine-tune the encoder on the other four folds
(``tool-router fit encoder``'s recipe), fit the lcr scorer and its thresholds
on those four folds with that encoder (``fit lcr``'s procedure, its own inner
5-fold threshold choice), and route fold k. The stock arm does the same with
the stock encoder. Scores are over the pooled out-of-fold answers (784
requests, each routed by a model that never saw it, encoder included).
Nothing here reads a test split.

    python benchmarks/encoder_cv.py --arms stock,ft2 --work /tmp/encoder_cv
"""

from __future__ import annotations

import argparse
from dataclasses import replace
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tool_router.common.catalog import load_catalog  # noqa: E402
from tool_router.routing.embeddings import (  # noqa: E402
    DEFAULT_MODEL,
    SentenceTransformerEncoder,
    apply_patch,
    resolve_model,
    save_patch,
)
from tool_router.evaluation.dataset import LEVELS, load_jsonl  # noqa: E402
from tool_router.evaluation.fitting.encoder import Recipe, TopLayers, fine_tune  # noqa: E402
from tool_router.evaluation.augment import augment  # noqa: E402
from tool_router.evaluation.fitting.lcr import AUGMENT_PER_REQUEST, fit_variant, objective  # noqa: E402,E501
from tool_router.evaluation.metrics import composite  # noqa: E402
from tool_router.routing.index import CatalogIndex  # noqa: E402
from tool_router.common.paths import config_path  # noqa: E402
from tool_router.routing.policies.lcr import VARIANTS, FeatureExtractor, decide, load_scope_phrases  # noqa: E402,E501

FOLDS = 5
SEED = 7
ARMS = {
    'stock': None,
    'ft1': Recipe(layers=1),
    'ft1e1': Recipe(layers=1, epochs=1),
    'ft2': Recipe(layers=2),
    'ft3': Recipe(layers=3),
    'ft1e4': Recipe(layers=1, epochs=4),
    'ft2e3': Recipe(layers=2, epochs=3),
    'ft1lr1e4': Recipe(layers=1, lr=1e-4),
    'ft1m': Recipe(layers=1, margin=0.1, oos_weight=2.0),
    'ft2m': Recipe(layers=2, margin=0.1, oos_weight=2.0),
}


def fold_extractor(encoder, catalog, memo=None, scope=None):  # type: ignore[no-untyped-def]
    """lcr's feature extractor over ``encoder``, its vectors kept in ``memo``."""
    index = CatalogIndex.ephemeral(catalog, encoder)
    extractor = FeatureExtractor(index, scope_phrases=[''])
    extractor.memoize(memo)
    extractor.scope_phrases = scope or load_scope_phrases()  # through the memo
    extractor.scope_vectors = extractor.encode(extractor.scope_phrases)
    return extractor


def route_fold(encoder, catalog, train, test, memo=None, scope=None, **fit):  # type: ignore[no-untyped-def]
    """Fit lcr on ``train`` with ``encoder`` and return its answers to ``test``.

    ``memo`` (text -> vector of this fold's encoder, filled in place) lets variants of lcr
    reuse the fold's vectors: only the encoder is expensive here. ``fit``: more arguments of
    ``fit_variant`` (``cross_fit``, ``oos_weight``).
    """
    extractor = fold_extractor(encoder, catalog, memo, scope)
    augmented = augment(train, AUGMENT_PER_REQUEST, 0)  # as `fit lcr` does
    model = fit_variant(train, extractor, 'lcr', 'cv', lambda s: print('   ', s, flush=True),
                        augmented, max_tools=8, **fit)
    names = extractor.names
    out = []
    for ex in test:  # as LearnedClauseRouter.route, cut at the shipped max_tools
        f = extractor.extract(ex.request, VARIANTS['lcr'])
        probs = model.probabilities(f.X, names)
        kept = decide(probs, f, model.threshold, model.clause_threshold, True, 8,
                      model.in_scope(f.scope), model.scope_threshold, model.scope_override)
        out.append({names[j] for j in kept})
    return out


def _load_memo(path: Path) -> dict:  # type: ignore[type-arg]
    """A fold's saved vectors (text -> vector), or an empty memo."""
    if not path.exists():
        return {}
    with path.open('rb') as fh:
        memo: dict = pickle.load(fh)  # type: ignore[type-arg]  # our own file, written above
    return memo


def report(examples, preds) -> dict:  # type: ignore[no-untyped-def]
    """Macro composite, empty rates, exact match per level, composite per style."""
    _, macro, oos = objective(examples, preds)
    inside = [(ex, p) for ex, p in zip(examples, preds) if ex.level != 'out_of_scope']
    styles: dict[str, list[float]] = {}
    for ex, p in inside:
        styles.setdefault(str(getattr(ex, 'style', '') or '-'), []).append(composite(ex.tools, p))
    em = {lv: float(np.mean([set(ex.tools) == p for ex, p in inside if ex.level == lv]))
          for lv in LEVELS if lv != 'out_of_scope'}
    return {
        'macro': round(macro, 4),
        'oos_empty': round(oos, 4),
        'in_empty': round(float(np.mean([not p for _, p in inside])), 4),
        'em': {k: round(v, 3) for k, v in em.items()},
        'styles': {k: round(float(np.mean(v)), 3) for k, v in sorted(styles.items())},
    }


def holdout_report(test, got) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """:func:`report` plus the counts behind the empty rates (in-scope empty, out of scope
    answered)."""
    res = report(test, got)
    inside = [p for ex, p in zip(test, got) if ex.level != 'out_of_scope']
    outside = [p for ex, p in zip(test, got) if ex.level == 'out_of_scope']
    res.update(in_empty_n=sum(not p for p in inside), n_in=len(inside),
               oos_answered=sum(bool(p) for p in outside), n_oos=len(outside))
    return res


def record(work: Path, res: dict) -> None:  # type: ignore[type-arg]
    """Print one run's figures and append them to ``work/results.jsonl``."""
    print(json.dumps(res), flush=True)
    with (work / 'results.jsonl').open('a') as fh:
        fh.write(json.dumps(res) + '\n')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dataset', default=str(ROOT / 'benchmarks/data/v2/dev.jsonl'))
    ap.add_argument('--arms', default='stock,ft2')
    ap.add_argument('--work', default='/tmp/encoder_cv')
    ap.add_argument('--folds', default='', help='comma-separated subset of folds (default all)')
    ap.add_argument('--tag', default='', help='names the run in results.jsonl and preds files')
    ap.add_argument('--no-memo', action='store_true',
                    help="do not keep each fold's vectors in WORK/ARM-foldK.memo.pkl")
    ap.add_argument('--scope', default='', help='out-of-scope phrases (default config/scope.yaml)')
    ap.add_argument('--drop', default='',
                    help="comma-separated lcr features (tool or scope) zeroed, for ablations")
    args = ap.parse_args()
    if args.drop:
        VARIANTS['lcr'] = replace(VARIANTS['lcr'], drop=tuple(args.drop.split(',')))
    import torch

    torch.set_num_threads(1)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    catalog = load_catalog(config_path('catalog.yaml'))
    examples = load_jsonl(args.dataset, catalog)
    assert 'test' not in Path(args.dataset).name
    fold = np.random.default_rng(SEED).permutation(len(examples)) % FOLDS
    folds = [int(k) for k in args.folds.split(',')] if args.folds else list(range(FOLDS))
    base = resolve_model(DEFAULT_MODEL)
    scope = load_scope_phrases(args.scope)
    stock = None
    for arm in args.arms.split(','):
        recipe = ARMS[arm]
        top = TopLayers(Path(base), recipe.layers) if recipe else None  # one frozen cache
        preds: list[set[str] | None] = [None] * len(examples)
        for k in folds:
            t0 = time.perf_counter()
            train = [ex for ex, f in zip(examples, fold) if f != k]
            test_idx = [i for i, f in enumerate(fold) if f == k]
            if recipe is None:
                if stock is None:
                    stock = SentenceTransformerEncoder(base, 'cpu', backend='torch', threads=1)
                encoder = stock
            else:
                patch = work / f'{arm}-fold{k}.safetensors'
                if not patch.exists():
                    tensors = fine_tune(Path(base), train, catalog, scope, recipe,
                                        log=lambda s: print('   ', s, flush=True), top=top)
                    save_patch(tensors, patch, {'cv_fold': str(k)})
                path = apply_patch(base, patch)
                encoder = SentenceTransformerEncoder(path, 'cpu', backend='torch', threads=1)
            memo_path = work / f'{arm}-fold{k}.memo.pkl'
            memo = {} if args.no_memo else _load_memo(memo_path)
            n_memo = len(memo)
            got = route_fold(encoder, catalog, train, [examples[i] for i in test_idx], memo,
                             scope)
            if not args.no_memo and len(memo) > n_memo:
                part = memo_path.with_suffix(f'.{os.getpid()}.tmp')
                with part.open('wb') as fh:
                    pickle.dump(memo, fh)
                part.replace(memo_path)  # atomic: a parallel run never reads half a file
            for i, p in zip(test_idx, got):
                preds[i] = p
            (work / f'{arm}{args.tag}-fold{k}.preds.json').write_text(json.dumps(
                {examples[i].id: sorted(p) for i, p in zip(test_idx, got)}))
            part = report([examples[i] for i in test_idx], got)
            print(f'{arm} fold {k}: macro {part["macro"]} oos-empty {part["oos_empty"]} '
                  f'in-empty {part["in_empty"]} ({time.perf_counter() - t0:.0f} s)', flush=True)
        done = [i for i, p in enumerate(preds) if p is not None]
        res = report([examples[i] for i in done], [preds[i] for i in done])
        res.update(arm=arm, tag=args.tag, drop=args.drop, n=len(done), folds=folds,
                   recipe=recipe.as_dict() if recipe else None)
        record(work, res)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
