"""``tool-router fit lcr``: fit the default policy's scorer and thresholds on a development set.

Trains one logistic scorer per variant (the full policy and its ablations) on
every (request, tool) pair of the dataset, chooses the two thresholds on
5-fold cross-validated predictions (so the thresholds are not fitted on the
very predictions they cut), refits on the whole set and writes the model file
(``config/lcr_model.json`` is the shipped one). Thresholds are chosen by the one
objective (:mod:`.objective`) on the answers cut to the router's ``max_tools``,
as served. Refuses a dataset that shares requests with a test split (:mod:`.guard`).

The dataset's requests are also written to the model file as lcr's exemplar memory
(:mod:`tool_router.routing.exemplars`); while fitting, each request's memory features come from a
memory without its writer fold's requests (:func:`fold_memories`), as an unseen writer's would.
"""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from tool_router.evaluation.dataset import Example, load_jsonl
from tool_router.evaluation.fitting.encoder import writer_folds
from tool_router.routing.exemplars import ExemplarBuilder, ExemplarMemory, Exemplars, embed_texts
from tool_router.routing.index import stderr_progress
from tool_router.evaluation.fitting.guard import refuse_reporting_data
from tool_router.evaluation.fitting.objective import (
    OUT_OF_SCOPE_EMPTY_WEIGHT,
    objective,
    objective_arrays,
)
from tool_router.evaluation.metrics import composite
from tool_router.routing.policies.lcr import (
    FEATURES,
    SCOPE_FEATURES,
    VARIANTS,
    FeatureExtractor,
    Features,
    ScorerModel,
    Variant,
    decide,
    logistic,
    with_tool_terms,
)

C_REG = 1.0
FOLDS = 5
SEED = 20261130
# Noisy training-only variants per dev request (typos, preambles, shorthand ...): in 5-fold CV
# on v2 dev, 2 raised the objective over none (benchmarks/results/HISTORY.md, the ablations
# of each refit).
AUGMENT_PER_REQUEST = 2
THRESHOLDS = np.round(np.arange(0.10, 0.86, 0.025), 3)
# A request whose best tool reaches the scope override is in scope whatever the scope model says
# (an order the scorer is sure of, in wording close to an out-of-scope phrase: "follow the
# tractor"); NO_OVERRIDE (above any probability) turns it off. With it the scope decision is
# joint: a request is answered empty only when the scope model says "not for the vehicle" *and*
# no tool is confident. The grid reaches down to 0.5 (issue 27 item 2: outside requests whose
# best tool scored 0.6-0.9 were vetoed); `fit lcr` logs the best objective at each value.
NO_OVERRIDE = 2.0
SCOPE_OVERRIDES = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99,
                   NO_OVERRIDE)
SCOPE_THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.025), 3)
# Writer folds of the exemplar memory in a fit without fold patches (with them: one per patch).
EXEMPLAR_FOLDS = 4


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
    *,
    max_tools: int,
    oos_weight: float = OUT_OF_SCOPE_EMPTY_WEIGHT,
    sweep: dict[float, tuple[float, ...]] | None = None,
) -> tuple[float, float, float, float, float]:
    """(threshold, clause, scope threshold, scope override, objective) on CV predictions.

    With a scope model, a request below the scope threshold gets nothing (unless its best tool
    reaches the scope override) and any other gets at least its best tool, so for each pair of
    tool thresholds the two scope constants are a cheap sweep. ``sweep``, when given, is filled
    with the best row at each scope override: (objective, macro, out-of-scope empty, in-scope
    empty, threshold, clause, scope threshold).
    """
    levels = np.array([ex.level for ex in examples])
    oos = levels == 'out_of_scope'
    top = probs.max(axis=1)
    best = (-1.0, 0.5, 0.5, 0.0, NO_OVERRIDE)
    routed_all = (1.0, 0.0) if scope_p is not None else ()  # every request in scope
    for t in THRESHOLDS:
        for ct in [c for c in THRESHOLDS if c <= t] if per_clause else [t]:
            preds = [
                {names[j] for j in decide(p, f, t, ct, per_clause, max_tools, *routed_all)}
                for p, f in zip(probs, feats)
            ]
            if scope_p is None:
                score = objective(examples, preds, oos_weight)[0]
                if score > best[0] + 1e-9:
                    best = (score, float(t), float(ct), 0.0, NO_OVERRIDE)
                continue
            comp = np.array(
                [
                    0.0 if o else composite(ex.tools, pr)
                    for ex, pr, o in zip(examples, preds, oos)
                ]
            )
            for ts in SCOPE_THRESHOLDS:
                for so in SCOPE_OVERRIDES:
                    routed = (scope_p >= ts) | (top >= so)
                    empty = ~routed | np.array([not p for p in preds])
                    score, macro, rate = objective_arrays(
                        levels, np.where(routed, comp, 0.0), empty, oos_weight)
                    if sweep is not None and score > sweep.get(so, (-1.0,))[0] + 1e-9:
                        sweep[so] = (score, macro, rate, float(empty[~oos].mean()), float(t),
                                     float(ct), float(ts))
                    if score > best[0] + 1e-9:
                        best = (score, float(t), float(ct), float(ts), float(so))
    return best[1], best[2], best[3], best[4], best[0]


def progress_bar(items: Sequence[Any], desc: str = 'routing') -> Any:
    """A progress bar over ``items`` on stderr (the fit commands' one bar)."""
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit='req', file=sys.stderr, mininterval=1.0, leave=False)


@dataclass
class Rows:
    """Training rows of a dataset: per-(request, tool) features and labels, scope features."""

    X: np.ndarray  # (N, T, F)
    Y: np.ndarray  # (N, T)
    S: np.ndarray  # (N, SCOPE_FEATURES)
    inside: np.ndarray  # (N,) the request is in scope

    @classmethod
    def of(cls, examples: Sequence[Example], feats: Sequence[Features], names: list[str],
           tool_prior: bool = True) -> 'Rows':
        """Rows of ``examples`` from their extracted ``feats`` (plus the per-tool terms)."""
        tools = names if tool_prior else []
        return cls(
            X=np.stack([with_tool_terms(f.X, names, tools) for f in feats]),
            Y=np.array([[n in ex.tools for n in names] for ex in examples], dtype=np.float32),
            S=np.stack([f.scope for f in feats]),
            inside=np.array([ex.level != 'out_of_scope' for ex in examples]),
        )

    def take(self, mask: np.ndarray) -> 'Rows':
        """The rows where ``mask`` is true."""
        return Rows(self.X[mask], self.Y[mask], self.S[mask], self.inside[mask])

    def plus(self, other: 'Rows | None') -> 'Rows':
        """These rows followed by ``other``'s."""
        if other is None or not len(other.X):
            return self
        return Rows(*(np.concatenate([a, b]) for a, b in
                      ((self.X, other.X), (self.Y, other.Y), (self.S, other.S),
                       (self.inside, other.inside))))


def _fit_rows(rows: Rows, scope: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mean, scale, weights, scope weights) fitted on ``rows``."""
    F = rows.X.shape[-1]
    mean, scale, w = _fit_logistic(rows.X.reshape(-1, F), rows.Y.reshape(-1))
    sw = _fit_scope(rows.S, rows.inside) if scope else np.zeros(0)
    return mean, scale, w, sw


def cross_validate(
    rows: Rows,
    scope: bool,
    extra: Rows | None = None,
    extra_source: np.ndarray | None = None,
    fold: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Out-of-fold (tool probabilities, in-scope probabilities) over 5 folds.

    ``extra`` rows (augmented variants; ``extra_source`` = index of the request each was made
    from) join a fold's training rows only when their source is in it: a held-out request's own
    variants never train the model that scores it. ``fold``: each row's fold (0..4); default
    random (seed ``SEED``).
    """
    n = len(rows.X)
    if fold is None:
        fold = np.random.default_rng(SEED).permutation(n) % FOLDS
    oof = np.zeros(rows.Y.shape, dtype=np.float64)
    oof_scope = np.ones(n) if scope else None
    F = rows.X.shape[-1]
    for k in range(FOLDS):
        tr, te = fold != k, fold == k
        train = rows.take(tr)
        if extra is not None and extra_source is not None:
            train = train.plus(extra.take(tr[extra_source]))
        mean, scale, w, sw = _fit_rows(train, scope)
        oof[te] = logistic(rows.X[te].reshape(-1, F), mean, scale, w).reshape(rows.Y[te].shape)
        if oof_scope is not None:
            oof_scope[te] = logistic(rows.S[te], np.zeros_like(sw), np.ones_like(sw), sw)
    return oof, oof_scope


@dataclass
class CVResult:
    """Cross-validated dev figures of one variant at its chosen thresholds."""

    threshold: float
    clause_threshold: float
    scope_threshold: float
    scope_override: float
    macro: float
    oos_empty: float
    in_empty: float
    predictions: list[set[str]]
    probs: np.ndarray  # (N, T) out-of-fold tool probabilities
    scope_p: np.ndarray | None  # (N,) out-of-fold in-scope probabilities
    # the best row at each scope override (choose_thresholds' ``sweep``; empty when given)
    sweep: dict[float, tuple[float, ...]] = field(default_factory=dict)


def evaluate_cv(
    examples: Sequence[Example],
    feats: Sequence[Features],
    names: list[str],
    variant: str,
    augmented: Sequence[Example] = (),
    aug_feats: Sequence[Features] = (),
    *,
    max_tools: int,
    oos_weight: float = OUT_OF_SCOPE_EMPTY_WEIGHT,
    fold: np.ndarray | None = None,
    thresholds: tuple[float, float, float, float] | None = None,
) -> CVResult:
    """Cross-validate ``variant`` on ``examples`` (plus training-only ``augmented`` variants).

    Answers are cut to ``max_tools`` (the router's, as served) before they are scored.
    ``fold``: each request's CV fold (default random, :func:`cross_validate`); ``thresholds``
    (threshold, clause, scope, override): score at these instead of choosing them.
    """
    v = VARIANTS[variant]
    rows = Rows.of(examples, feats, names, v.tool_prior)
    extra, source = _augmented_rows(examples, augmented, aug_feats, names, v.tool_prior)
    oof, oof_scope = cross_validate(rows, v.scope, extra, source, fold)
    sweep: dict[float, tuple[float, ...]] = {}
    if thresholds is None:
        t, ct, ts, so, _ = choose_thresholds(examples, feats, oof, names, v.per_clause,
                                             oof_scope, max_tools=max_tools,
                                             oos_weight=oos_weight, sweep=sweep)
    else:
        t, ct, ts, so = thresholds
    scope_args = (
        [(float(p), ts, so) for p in oof_scope] if oof_scope is not None else [()] * len(feats)
    )
    preds = [
        {names[j] for j in decide(p, f, t, ct, v.per_clause, max_tools, *a)}
        for p, f, a in zip(oof, feats, scope_args)
    ]
    _, macro, oos = objective(examples, preds)
    in_empty = float(
        np.mean([not p for p, ex in zip(preds, examples) if ex.level != 'out_of_scope'])
    )
    return CVResult(t, ct, ts, so, macro, oos, in_empty, preds, oof, oof_scope, sweep)


def _augmented_rows(
    examples: Sequence[Example],
    augmented: Sequence[Example],
    aug_feats: Sequence[Features],
    names: list[str],
    tool_prior: bool,
) -> tuple[Rows | None, np.ndarray | None]:
    """Rows of the augmented variants and the index of each one's source request."""
    if not augmented:
        return None, None
    where = {ex.id: i for i, ex in enumerate(examples)}
    source = np.array([where[str((a.model_extra or {})['augmented_from'])] for a in augmented])
    return Rows.of(augmented, aug_feats, names, tool_prior), source


@dataclass
class CrossFit:
    """Out-of-fold features: fold k's requests seen through an encoder fine-tuned without them.

    The shipped encoder is fine-tuned on the whole development set, so its similarities for a
    dev request are those of a request it has learnt; a request at run time is one it has not.
    Fitting lcr's weights and thresholds on in-sample similarities leaves them calibrated for
    the wrong inputs (the writer holdout of benchmarks/results/HISTORY.md: in-scope empties and
    scope misses rise on unseen writers). ``extractors[k]`` uses the encoder fine-tuned on the
    requests whose ``fold`` is not k; an augmented variant goes with its source request's fold.
    """

    fold: dict[str, int]  # request id -> fold
    extractors: Sequence[FeatureExtractor]
    # fold k's exemplar memory: the dataset's exemplars without fold k's (exemplars.py)
    memories: Sequence[ExemplarMemory | None] = ()

    def features(
        self,
        examples: Sequence[Example],
        augmented: Sequence[Example],
        v: Variant,
        names: list[str],
    ) -> tuple[list[Features], list[Features]]:
        """(features of ``examples``, of ``augmented``), each from its fold's extractor."""
        for e in self.extractors:
            if e.names != names:
                raise ValueError('cross-fit extractors must share the catalog')

        def fold_of(ex: Example) -> int:
            source = (ex.model_extra or {}).get('augmented_from', ex.id)
            return self.fold[str(source)]

        def run(items: Sequence[Example], desc: str) -> list[Features]:
            out: list[Features | None] = [None] * len(items)
            for k, extractor in enumerate(self.extractors):  # one encoder at a time
                mine = [i for i, ex in enumerate(items) if fold_of(ex) == k]
                with self._memory_of(k):
                    for i in progress_bar(mine, f'{desc} fold {k}'):
                        out[i] = extractor.extract(items[i].request, v)
            missing = [items[i].id for i, f in enumerate(out) if f is None]
            if missing:
                raise ValueError(f'no cross-fit fold for {missing[:3]}')
            return [f for f in out if f is not None]

        return run(examples, 'requests'), run(augmented, 'augmented')

    @contextlib.contextmanager
    def _memory_of(self, k: int) -> Iterator[None]:
        """Fold ``k``'s extractor with fold ``k``'s exemplar memory (if any), restored after."""
        if not self.memories:
            yield
            return
        extractor = self.extractors[k]
        before, extractor.memory = extractor.memory, self.memories[k]
        try:
            yield
        finally:
            extractor.memory = before


def fit_variant(
    examples: list[Example],
    extractor: FeatureExtractor,
    variant: str,
    source: str,
    log: Callable[[str], Any] = print,
    augmented: Sequence[Example] = (),
    *,
    max_tools: int,
    cross_fit: CrossFit | None = None,
    oos_weight: float = OUT_OF_SCOPE_EMPTY_WEIGHT,
    writer_cv: bool = False,
) -> ScorerModel:
    """Fit one variant: features, 5-fold thresholds, final weights (augmentation trains only).

    ``cross_fit``: take every request's features from an encoder fine-tuned without it
    (:class:`CrossFit`) instead of ``extractor``'s, whose encoder was trained on them all.
    ``writer_cv``: also log the CV figures at the chosen thresholds with folds by writer
    (:func:`by_writer`).
    """
    v = VARIANTS[variant]
    names = extractor.names
    if cross_fit is None:
        feats = [extractor.extract(ex.request, v) for ex in progress_bar(examples, variant)]
        aug_feats = [extractor.extract(ex.request, v)
                     for ex in progress_bar(augmented, 'augmented')]
    else:
        feats, aug_feats = cross_fit.features(examples, augmented, v, names)
    cv = evaluate_cv(examples, feats, names, variant, augmented, aug_feats,
                     max_tools=max_tools, oos_weight=oos_weight)
    rows = Rows.of(examples, feats, names, v.tool_prior)
    if augmented:
        rows = rows.plus(Rows.of(augmented, aug_feats, names, v.tool_prior))
    mean, scale, w, scope_w = _fit_rows(rows, v.scope)
    log(
        f'{variant:22s} threshold {cv.threshold:.3f} clause {cv.clause_threshold:.3f} '
        f'scope {cv.scope_threshold:.3f} override {cv.scope_override:.2f}  '
        f'cross-validated dev: macro composite {cv.macro:.4f}, '
        f'out-of-scope empty {cv.oos_empty:.3f}, in-scope empty {cv.in_empty:.3f}'
    )
    if writer_cv:
        for so, (score, macro, rate, in_empty, t, ct, ts) in sorted(cv.sweep.items()):
            log(f'{variant:22s}   override {so:.2f}: best objective {score:.4f} (threshold '
                f'{t:.3f} clause {ct:.3f} scope {ts:.3f}): macro composite {macro:.4f}, '
                f'out-of-scope empty {rate:.3f}, in-scope empty {in_empty:.3f}')
        log(by_writer(examples, feats, names, variant, augmented, aug_feats, cv,
                      max_tools=max_tools))
    return ScorerModel(
        variant=variant,
        features=list(FEATURES),
        tools=list(names) if v.tool_prior else [],
        mean=mean.tolist(),
        scale=scale.tolist(),
        weights=w.tolist(),
        threshold=cv.threshold,
        clause_threshold=cv.clause_threshold,
        scope_features=list(SCOPE_FEATURES) if v.scope else [],
        scope_weights=scope_w.tolist() if v.scope else [],
        scope_threshold=cv.scope_threshold,
        scope_override=cv.scope_override,
        trained_on=source,
        cv_macro_composite=round(cv.macro, 4),
    )


def by_writer(
    examples: Sequence[Example],
    feats: Sequence[Features],
    names: list[str],
    variant: str,
    augmented: Sequence[Example],
    aug_feats: Sequence[Features],
    cv: CVResult,
    *,
    max_tools: int,
) -> str:
    """The CV line of ``variant`` at ``cv``'s thresholds, with the folds grouped by writer.

    The random folds of :func:`cross_validate` let a writer's other requests train the model
    that scores it; grouped by writer (:func:`writer_folds`), no writer is on both sides, as
    for the outside sets' writers. A figure to expect from new writers, not a choice: the
    thresholds stay those of the random folds. A dataset of fewer writers than folds says so.
    """
    try:
        group = writer_folds(examples, FOLDS)
    except ValueError as exc:
        return f'{variant:22s} no CV by writer: {exc}'
    wcv = evaluate_cv(examples, feats, names, variant, augmented, aug_feats, max_tools=max_tools,
                      fold=np.array([group[ex.id] for ex in examples]),
                      thresholds=(cv.threshold, cv.clause_threshold, cv.scope_threshold,
                                  cv.scope_override))
    return (f'{variant:22s} the same thresholds, CV folds by writer (new writers): macro '
            f'composite {wcv.macro:.4f}, out-of-scope empty {wcv.oos_empty:.3f}, in-scope empty '
            f'{wcv.in_empty:.3f}')


def fit(
    dataset: Path,
    router: Any,
    out: Path,
    variants: Sequence[str] = tuple(VARIANTS),
    log: Callable[[str], Any] = print,
    augment_per_request: int | None = None,
    cross_fit: Sequence[Path] = (),
    oos_weight: float = OUT_OF_SCOPE_EMPTY_WEIGHT,
) -> dict[str, Any]:
    """Fit every variant on ``dataset`` and write ``out``; refuses test-split requests.

    ``augment_per_request`` (None: ``AUGMENT_PER_REQUEST``) noisy variants of each request
    (:mod:`tool_router.evaluation.augment`, seed 0) join the training rows only: thresholds are
    chosen on the original requests' cross-validated predictions.
    ``cross_fit``: the fold patches of ``tool-router fit encoder --fold K --folds N`` on this
    dataset, one per fold: every request's features come from the fold encoder that never saw
    it (:class:`CrossFit`); without them, from the router's own encoder.
    """
    from tool_router.evaluation.augment import augment

    n_aug = AUGMENT_PER_REQUEST if augment_per_request is None else augment_per_request
    examples = load_jsonl(dataset, router.catalog)
    if not refuse_reporting_data(examples, str(dataset)):
        log('warning: no test split found to check the dataset against')
    augmented = augment(examples, n_aug, 0) if n_aug > 0 else []
    pooling = bool(router.config.lcr.clause_pooling)
    extractor = FeatureExtractor(router.index, pooling=pooling)
    extractor.memoize()  # the variants share most of their embedded texts
    max_tools = min(router.config.max_tools, len(router.catalog))  # as served
    if cross_fit:
        cf = cross_fit_extractors(examples, cross_fit, router, pooling, log)
    else:  # one encoder; the folds only keep a request's writer out of its exemplar memory
        cf = CrossFit(writer_folds(examples, EXEMPLAR_FOLDS), [extractor] * EXEMPLAR_FOLDS)
    exemplars = collect_exemplars(examples, extractor)
    cf.memories = fold_memories(exemplars, cf, log)
    models = {
        v: fit_variant(
            examples, extractor, v, dataset.name, log, augmented, max_tools=max_tools,
            cross_fit=cf, oos_weight=oos_weight, writer_cv=v == 'lcr',
        ).model_copy(update={'clause_pooling': pooling})
        for v in variants
    }
    payload = {
        'about': 'Fitted by `tool-router fit lcr`; see tool_router/routing/policies/lcr.py.',
        'dataset': dataset.name,
        'n_requests': len(examples),
        'augmented_per_request': n_aug,
        'n_augmented': len(augmented),
        'cross_fit_folds': len(cross_fit),
        'objective_oos_weight': oos_weight,
        'exemplar_folds': len(cf.extractors),
        'variants': {k: m.model_dump() for k, m in models.items()},
        'exemplars': exemplars.to_json(),
    }
    out.write_text(json.dumps(payload, indent=1) + '\n', encoding='utf-8')
    log(f'wrote {out}')
    return payload


def collect_exemplars(examples: Sequence[Example], extractor: FeatureExtractor) -> Exemplars:
    """The dataset's requests as exemplars (:mod:`~tool_router.routing.exemplars`), lcr-segmented.

    A multi-tool request's clauses go to their closest gold tool under ``extractor``'s encoder
    (the router's: the shipped exemplars are those it will be asked with).
    """
    builder = ExemplarBuilder()
    col = {n: i for i, n in enumerate(extractor.names)}
    before, extractor.memory = extractor.memory, None
    try:
        for ex in progress_bar(examples, 'exemplars'):
            f = extractor.extract(ex.request, VARIANTS['lcr'])
            builder.add(ex.id, f.fragments[0], ex.tools,
                        [f.fragments[1 + k] for k in range(len(f.clauses))],
                        f.clause_score, list(~f.excluded), col)
    finally:
        extractor.memory = before
    return builder.build()


def _not_in_fold(fold: dict[str, int], k: int) -> Callable[[str], bool]:
    """Keep an exemplar unless its source request is in writer fold ``k``."""
    return lambda source: fold[source] != k


def fold_memories(
    exemplars: Exemplars, cf: CrossFit, log: Callable[[str], Any] = print
) -> list[ExemplarMemory]:
    """Per fold k, the exemplars of the other folds with fold k's encoder's vectors.

    A request's features never come from its own writer's exemplars: the similarities an
    unseen writer's request gets at run time.
    """
    out = []
    for k, extractor in enumerate(cf.extractors):
        vectors = embed_texts(exemplars.texts, extractor.encode, stderr_progress)
        out.append(ExemplarMemory(exemplars, vectors, extractor.names,
                                  keep=_not_in_fold(cf.fold, k)))
        total = len(exemplars.requests) + len(exemplars.out_of_scope)
        log(f'exemplar memory fold {k}: {out[-1].size} of the {total} requests '
            '(the rest are its writers\' own)')
    return out


def cross_fit_extractors(
    examples: Sequence[Example],
    patches: Sequence[Path],
    router: Any,
    pooling: bool,
    log: Callable[[str], Any] = print,
) -> CrossFit:
    """A :class:`CrossFit` over fold patches, checked against ``examples``' writer folds.

    Each patch records its fold, the number of folds and a digest of the request ids it was
    trained without (:func:`tool_router.evaluation.fitting.encoder.fold_meta`); a patch made on
    another dataset, or a missing or repeated fold, is refused rather than silently leaking.
    """
    from tool_router.routing.embeddings import (
        DEFAULT_MODEL,
        SentenceTransformerEncoder,
        apply_patch,
        patch_meta,
        resolve_model,
    )
    from tool_router.common.errors import ConfigError
    from tool_router.evaluation.fitting.encoder import fold_meta, writer_folds
    from tool_router.routing.index import CatalogIndex

    by_fold: dict[int, Path] = {}
    n = len(patches)
    fold = writer_folds(examples, n)
    for path in patches:
        meta = patch_meta(path)
        k = int(meta.get('fold', -1))
        if int(meta.get('folds', 0)) != n or not 0 <= k < n or k in by_fold:
            raise ConfigError(f'{path} is not fold k of {n} (its meta: fold {meta.get("fold")}, '
                              f'folds {meta.get("folds")}), or the fold is repeated',
                              hint=f'give one patch per fold 0..{n - 1}')
        if meta.get('held_out') != fold_meta(examples, fold, k)['held_out']:
            raise ConfigError(f'{path} was not trained without fold {k} of this dataset',
                              hint='refit the fold patches on it (`fit encoder --fold`)')
        by_fold[k] = path
    base = resolve_model(DEFAULT_MODEL)
    e = router.config.encoder
    extractors = []
    for k in range(n):
        log(f'cross-fit fold {k}: {by_fold[k].name}')
        encoder = SentenceTransformerEncoder(apply_patch(base, by_fold[k]), router.config.device,
                                             e.backend, e.threads, 0, e.pass_threads)
        extractor = FeatureExtractor(CatalogIndex.ephemeral(router.catalog, encoder),
                                     pooling=pooling)
        extractor.memoize()
        extractors.append(extractor)
    return CrossFit(fold, extractors)
