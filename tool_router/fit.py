"""``tool-router fit``: fit the default policy's scorer and thresholds on a development set.

Trains one logistic scorer per variant (the full policy and its ablations) on
every (request, tool) pair of the dataset, chooses the two thresholds on
5-fold cross-validated predictions (so the thresholds are not fitted on the
very predictions they cut), refits on the whole set and writes
``config/lcr_model.json``. Refuses a dataset whose file name says ``test``:
the test split is for reporting only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tool_router.errors import DatasetError
from tool_router.evaluation.dataset import LEVELS, Example, load_jsonl
from tool_router.policies.lcr import (
    FEATURES,
    VARIANTS,
    FeatureExtractor,
    ScorerModel,
    decide,
    logistic,
)

C_REG = 1.0
FOLDS = 5
SEED = 20261130
THRESHOLDS = np.round(np.arange(0.10, 0.86, 0.025), 3)


def _composite(truth: set[str], pred: set[str]) -> float:
    hit = len(truth & pred)
    return (
        0.5 * hit / len(truth)
        + 0.25 * (hit / len(pred) if pred else 0.0)
        + 0.25 * float(truth == pred)
    )


def objective(
    examples: Sequence[Example], predictions: Sequence[set[str]]
) -> tuple[float, float, float]:
    """(objective, macro composite, out-of-scope empty rate); objective = macro + 0.25 oos."""
    per_level: dict[str, list[float]] = {lv: [] for lv in LEVELS}
    oos: list[float] = []
    for ex, pred in zip(examples, predictions):
        if ex.level == 'out_of_scope':
            oos.append(float(not pred))
        else:
            per_level[ex.level].append(_composite(set(ex.tools), pred))
    macro = float(np.mean([np.mean(v) for v in per_level.values() if v]))
    rate = float(np.mean(oos)) if oos else 1.0
    return macro + 0.25 * rate, macro, rate


def _fit_logistic(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.linear_model import LogisticRegression

    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    mean[0], scale[0] = 0.0, 1.0  # the bias column stays 1
    scale[scale < 1e-6] = 1.0
    Z = (X - mean) / scale
    clf = LogisticRegression(C=C_REG, fit_intercept=False, max_iter=2000)
    clf.fit(Z, y)
    return mean, scale, clf.coef_[0]


def choose_thresholds(examples, feats, probs, names, per_clause) -> tuple[float, float, float]:
    best = (-1.0, 0.5, 0.5)
    for t in THRESHOLDS:
        for ct in [c for c in THRESHOLDS if c <= t] if per_clause else [t]:
            preds = [
                {names[j] for j in decide(p, f, t, ct, per_clause, 8)}
                for p, f in zip(probs, feats)
            ]
            score = objective(examples, preds)[0]
            if score > best[0] + 1e-9:
                best = (score, float(t), float(ct))
    return best[1], best[2], best[0]


def fit_variant(
    examples: list[Example], extractor: FeatureExtractor, variant: str, source: str, log=print
) -> ScorerModel:
    v = VARIANTS[variant]
    names = extractor.names
    feats = [extractor.extract(ex.request, v) for ex in examples]
    X = np.stack([f['X'] for f in feats])  # (N, T, F)
    Y = np.array([[n in ex.tools for n in names] for ex in examples], dtype=np.float32)
    rng = np.random.default_rng(SEED)
    fold = rng.permutation(len(examples)) % FOLDS
    oof = np.zeros(Y.shape, dtype=np.float64)
    for k in range(FOLDS):
        tr, te = fold != k, fold == k
        mean, scale, w = _fit_logistic(X[tr].reshape(-1, X.shape[-1]), Y[tr].reshape(-1))
        oof[te] = logistic(X[te].reshape(-1, X.shape[-1]), mean, scale, w).reshape(Y[te].shape)
    t, ct, cv_score = choose_thresholds(examples, feats, oof, names, v.per_clause)
    preds = [
        {names[j] for j in decide(p, f, t, ct, v.per_clause, 8)} for p, f in zip(oof, feats)
    ]
    _, macro, oos = objective(examples, preds)
    mean, scale, w = _fit_logistic(X.reshape(-1, X.shape[-1]), Y.reshape(-1))
    log(
        f'{variant:22s} threshold {t:.3f} clause {ct:.3f}  cross-validated dev: macro composite '
        f'{macro:.4f}, out-of-scope empty {oos:.3f}'
    )
    return ScorerModel(
        variant=variant,
        features=list(FEATURES),
        mean=mean.tolist(),
        scale=scale.tolist(),
        weights=w.tolist(),
        threshold=t,
        clause_threshold=ct,
        trained_on=source,
        cv_macro_composite=round(macro, 4),
    )


def fit(
    dataset: Path, router: Any, out: Path, variants: Sequence[str] = tuple(VARIANTS), log=print
) -> dict:
    if 'test' in dataset.name.lower():
        raise DatasetError(
            'refusing to fit on a test split',
            where=str(dataset),
            hint='fit on the development split; the test split is for reporting only',
        )
    examples = load_jsonl(dataset, router.catalog)
    extractor = FeatureExtractor(router.index)
    models = {v: fit_variant(examples, extractor, v, dataset.name, log) for v in variants}
    payload = {
        'about': 'Fitted by `tool-router fit`; see tool_router/policies/lcr.py.',
        'dataset': dataset.name,
        'n_requests': len(examples),
        'variants': {k: m.model_dump() for k, m in models.items()},
    }
    out.write_text(json.dumps(payload, indent=1) + '\n', encoding='utf-8')
    log(f'wrote {out}')
    return payload


def cmd_fit(args: argparse.Namespace) -> int:
    from tool_router.cli_core import router_from_args
    from tool_router.paths import config_path

    router = router_from_args(args, policy='cdbv3')  # the scorer being fitted may not exist yet
    fit(Path(args.dataset), router, Path(args.out) if args.out else config_path('lcr_model.json'))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from tool_router.cli_core import add_config_args

    p = sub.add_parser('fit', help='fit the default policy (lcr) on a development set')
    p.add_argument(
        '--dataset', required=True, help='annotated JSONL (the dev split; never the test split)'
    )
    p.add_argument('--out', help='model file to write (default: config/lcr_model.json)')
    add_config_args(p)
    p.set_defaults(handler=cmd_fit)
