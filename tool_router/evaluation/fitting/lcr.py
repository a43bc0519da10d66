"""``tool-router fit lcr``: fit the default policy's scorer and thresholds on a development set.

Trains one logistic scorer per variant (the full policy and its ablations) on
every (request, tool) pair of the dataset, chooses the two thresholds on
5-fold cross-validated predictions (so the thresholds are not fitted on the
very predictions they cut), refits on the whole set and writes the model file
(``config/lcr_model.json`` is the shipped one). Thresholds are chosen on the
answers cut to 8 tools (the shipped ``max_tools``). Refuses a
dataset that shares requests with a test split (:mod:`.guard`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from tool_router.evaluation.dataset import LEVELS, Example, load_jsonl
from tool_router.evaluation.fitting.guard import refuse_reporting_data
from tool_router.evaluation.metrics import composite
from tool_router.policies.lcr import (
    FEATURES,
    SCOPE_FEATURES,
    VARIANTS,
    FeatureExtractor,
    Features,
    ScorerModel,
    decide,
    logistic,
)

C_REG = 1.0
FOLDS = 5
SEED = 20261130
THRESHOLDS = np.round(np.arange(0.10, 0.86, 0.025), 3)
SCOPE_THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.025), 3)


def objective(
    examples: Sequence[Example], predictions: Sequence[set[str]]
) -> tuple[float, float, float]:
    """(objective, macro composite, out-of-scope empty rate).

    objective = macro + 0.25 x out-of-scope empty rate - 0.25 x in-scope empty rate: abstaining
    correctly is worth something, and an empty answer to a request the catalog serves (the
    failure users notice first) costs as much again as its lost composite.
    """
    levels = np.array([ex.level for ex in examples])
    comp = np.array(
        [0.0 if ex.level == 'out_of_scope' else composite(ex.tools, p)
         for ex, p in zip(examples, predictions)]
    )
    empty = np.array([not p for p in predictions], dtype=bool)
    return _objective_arrays(levels, comp, empty)


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


def _fit_scope(S: np.ndarray, in_scope: np.ndarray) -> np.ndarray:
    """Weights of the request-level scope model (raw features: a bias and two similarities)."""
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=C_REG, fit_intercept=False, max_iter=2000)
    clf.fit(S, in_scope)
    return np.asarray(clf.coef_[0], dtype=np.float64)


def choose_thresholds(
    examples: Sequence[Example],
    feats: Sequence[Features],
    probs: np.ndarray,
    names: list[str],
    per_clause: bool,
    scope_p: np.ndarray | None = None,
) -> tuple[float, float, float, float]:
    """(threshold, clause threshold, scope threshold, objective) on cross-validated predictions.

    With a scope model, a request below the scope threshold gets nothing and any other gets at
    least its best tool, so for each pair of tool thresholds the scope threshold is a cheap sweep.
    """
    levels = np.array([ex.level for ex in examples])
    oos = levels == 'out_of_scope'
    best = (-1.0, 0.5, 0.5, 0.0)
    routed_all = (1.0, 0.0) if scope_p is not None else ()  # every request in scope
    for t in THRESHOLDS:
        for ct in [c for c in THRESHOLDS if c <= t] if per_clause else [t]:
            preds = [
                {names[j] for j in decide(p, f, t, ct, per_clause, 8, *routed_all)}
                for p, f in zip(probs, feats)
            ]
            if scope_p is None:
                score = objective(examples, preds)[0]
                if score > best[0] + 1e-9:
                    best = (score, float(t), float(ct), 0.0)
                continue
            comp = np.array(
                [
                    0.0 if o else composite(ex.tools, pr)
                    for ex, pr, o in zip(examples, preds, oos)
                ]
            )
            for ts in SCOPE_THRESHOLDS:
                routed = scope_p >= ts
                empty = ~routed | np.array([not p for p in preds])
                score = _objective_arrays(levels, np.where(routed, comp, 0.0), empty)[0]
                if score > best[0] + 1e-9:
                    best = (score, float(t), float(ct), float(ts))
    return best[1], best[2], best[3], best[0]


def _objective_arrays(
    levels: np.ndarray, comp: np.ndarray, empty: np.ndarray
) -> tuple[float, float, float]:
    """``objective`` from per-request composites (in scope) and empty flags."""
    macro = float(np.mean([comp[levels == lv].mean() for lv in LEVELS if (levels == lv).any()]))
    oos = levels == 'out_of_scope'
    rate = float(empty[oos].mean()) if oos.any() else 1.0
    in_empty = float(empty[~oos].mean()) if (~oos).any() else 0.0
    return macro + 0.25 * rate - 0.25 * in_empty, macro, rate


def _progress(items: Sequence[Any], desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit='req', file=sys.stderr, mininterval=1.0, leave=False)


def fit_variant(
    examples: list[Example],
    extractor: FeatureExtractor,
    variant: str,
    source: str,
    log: Callable[[str], Any] = print,
) -> ScorerModel:
    """Fit one variant: features, 5-fold thresholds, final weights."""
    v = VARIANTS[variant]
    names = extractor.names
    feats = [extractor.extract(ex.request, v) for ex in _progress(examples, variant)]
    X = np.stack([f.X for f in feats])  # (N, T, F)
    S = np.stack([f.scope for f in feats])  # (N, S)
    Y = np.array([[n in ex.tools for n in names] for ex in examples], dtype=np.float32)
    inside = np.array([ex.level != 'out_of_scope' for ex in examples])
    rng = np.random.default_rng(SEED)
    fold = rng.permutation(len(examples)) % FOLDS
    oof = np.zeros(Y.shape, dtype=np.float64)
    oof_scope = np.ones(len(examples)) if v.scope else None
    for k in range(FOLDS):
        tr, te = fold != k, fold == k
        mean, scale, w = _fit_logistic(X[tr].reshape(-1, X.shape[-1]), Y[tr].reshape(-1))
        oof[te] = logistic(X[te].reshape(-1, X.shape[-1]), mean, scale, w).reshape(Y[te].shape)
        if oof_scope is not None:
            sw = _fit_scope(S[tr], inside[tr])
            oof_scope[te] = logistic(S[te], np.zeros_like(sw), np.ones_like(sw), sw)
    t, ct, ts, cv_score = choose_thresholds(examples, feats, oof, names, v.per_clause, oof_scope)
    scope_args = (
        [(float(p), ts) for p in oof_scope] if oof_scope is not None else [()] * len(feats)
    )
    preds = [
        {names[j] for j in decide(p, f, t, ct, v.per_clause, 8, *a)}
        for p, f, a in zip(oof, feats, scope_args)
    ]
    _, macro, oos = objective(examples, preds)
    in_empty = float(
        np.mean([not p for p, ex in zip(preds, examples) if ex.level != 'out_of_scope'])
    )
    mean, scale, w = _fit_logistic(X.reshape(-1, X.shape[-1]), Y.reshape(-1))
    scope_w = _fit_scope(S, inside).tolist() if v.scope else []
    log(
        f'{variant:22s} threshold {t:.3f} clause {ct:.3f} scope {ts:.3f}  cross-validated dev: '
        f'macro composite {macro:.4f}, out-of-scope empty {oos:.3f}, in-scope empty {in_empty:.3f}'
    )
    return ScorerModel(
        variant=variant,
        features=list(FEATURES),
        mean=mean.tolist(),
        scale=scale.tolist(),
        weights=w.tolist(),
        threshold=t,
        clause_threshold=ct,
        scope_features=list(SCOPE_FEATURES) if v.scope else [],
        scope_weights=scope_w,
        scope_threshold=ts,
        trained_on=source,
        cv_macro_composite=round(macro, 4),
    )


def fit(
    dataset: Path,
    router: Any,
    out: Path,
    variants: Sequence[str] = tuple(VARIANTS),
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Fit every variant on ``dataset`` and write ``out``; refuses test-split requests."""
    examples = load_jsonl(dataset, router.catalog)
    if not refuse_reporting_data(examples, str(dataset)):
        log('warning: no test split found to check the dataset against')
    extractor = FeatureExtractor(router.index)
    extractor.memoize()  # the variants share most of their embedded texts
    models = {v: fit_variant(examples, extractor, v, dataset.name, log) for v in variants}
    payload = {
        'about': 'Fitted by `tool-router fit lcr`; see tool_router/policies/lcr.py.',
        'dataset': dataset.name,
        'n_requests': len(examples),
        'variants': {k: m.model_dump() for k, m in models.items()},
    }
    out.write_text(json.dumps(payload, indent=1) + '\n', encoding='utf-8')
    log(f'wrote {out}')
    return payload
