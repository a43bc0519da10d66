"""``tool-router fit questions``: the question probe, fitted on development data only.

Rows (:func:`probe_rows`): a **question** is a state question of the dev question file
(``kind: state_question``) or an in-scope v2 dev request of style ``question`` whose truth has
no actuator; an **order** is a polite order of the question file or any in-scope v2 dev request
whose truth has an actuator (every style: plain, polite, conditional, typo ...). Mixed requests,
out-of-scope ones and the rest are left out. Every row's text is checked against the test
splits first (:func:`refuse_reporting_data`).

Vectors: the sentence vector lcr computes for the request (``Decision.request_vector``: the
normalised, spelling-repaired full text under the router's encoder), so the probe reads at
route time exactly what it was fitted on.

Fit (:func:`fit_probe`): an L2-regularised logistic regression (``C``), out-of-fold
probabilities on ``folds`` folds grouped by writer (no writer on both sides), and the threshold
the lowest of :data:`THRESHOLDS` at which **no order** of dev reads as a question out of fold;
the probe is then refitted on all rows. The report says, at that threshold, how many dev
questions the probe reads (out of fold), and how many of those the rules had missed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from tool_router.common.catalog import Catalog, Kind
from tool_router.evaluation.dataset import load_jsonl
from tool_router.evaluation.fitting.guard import refuse_reporting_data
from tool_router.routing.question_probe import QuestionProbe

THRESHOLDS = tuple(round(0.80 + 0.01 * k, 2) for k in range(20))  # 0.80 ... 0.99
C_REG = 1.0
FOLDS = 5


@dataclass(frozen=True)
class ProbeRow:
    """One labelled dev request: a question about a state, or an order."""

    id: str
    request: str
    question: bool
    writer: str
    source: str  # 'v2' or the question file's kind


def probe_rows(dev: Path, questions: Path, catalog: Catalog) -> list[ProbeRow]:
    """The labelled rows of the two dev files (see the module docstring)."""
    actuators = {t.name for t in catalog.tools if t.kind is Kind.ACTUATOR}
    rows: list[ProbeRow] = []
    for ex in load_jsonl(dev, catalog):
        if ex.level == 'out_of_scope':
            continue
        acts = bool(set(ex.tools) & actuators)
        if acts or getattr(ex, 'style', '') == 'question':
            rows.append(ProbeRow(ex.id, ex.request, not acts,
                                 str(getattr(ex, 'writer', '') or '?'), 'v2'))
    for n, line in enumerate(questions.read_text(encoding='utf-8').splitlines(), 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        if raw.get('kind') in ('state_question', 'polite_order'):
            rows.append(ProbeRow(str(raw.get('id', n)), str(raw['request']),
                                 raw['kind'] == 'state_question', str(raw.get('writer', '?')),
                                 str(raw['kind'])))
    refuse_reporting_data(rows, f'{dev} + {questions}')  # type: ignore[arg-type]
    return rows


def _logistic(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=C_REG, max_iter=5000)
    clf.fit(X, y)
    return clf.coef_[0].astype(np.float64), float(clf.intercept_[0])


def out_of_fold(X: np.ndarray, y: np.ndarray, groups: Sequence[str],
                folds: int = FOLDS) -> np.ndarray:
    """Out-of-fold probabilities, folds grouped by writer."""
    from sklearn.model_selection import GroupKFold

    p = np.zeros(len(y))
    for train, test in GroupKFold(folds).split(X, y, list(groups)):
        w, b = _logistic(X[train], y[train])
        p[test] = 1.0 / (1.0 + np.exp(-(X[test] @ w + b)))
    return p


def choose_threshold(p: np.ndarray, y: np.ndarray) -> float:
    """The lowest threshold of the grid at which no order (y == 0) reads as a question."""
    for t in THRESHOLDS:
        if not ((p >= t) & (y == 0)).any():
            return t
    return 1.0


def fit_probe(rows: Sequence[ProbeRow], vectors: np.ndarray, weights_id: str,
              missed_by_rules: Callable[[ProbeRow], bool] | None = None,
              log: Callable[[str], None] = print) -> QuestionProbe:
    """Fit on ``vectors`` (one unit vector per row); the report goes to ``log`` and the file."""
    X = np.asarray(vectors, dtype=np.float64)
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    y = np.array([r.question for r in rows], dtype=np.int64)
    p = out_of_fold(X, y, [r.writer for r in rows])
    threshold = choose_threshold(p, y)
    flagged = p >= threshold
    fit: dict[str, Any] = {
        'rows': len(rows), 'questions': int(y.sum()), 'orders': int((1 - y).sum()),
        'folds': f'{FOLDS}, grouped by writer', 'C': C_REG, 'threshold_grid': '0.80-0.99',
        'cv_questions_read': int((flagged & (y == 1)).sum()),
        'cv_orders_read_as_questions': int((flagged & (y == 0)).sum()),
        'cv_orders_at_or_above': {f'{t:.2f}': int(((p >= t) & (y == 0)).sum())
                                  for t in (0.8, 0.85, 0.9, 0.95)},
    }
    if missed_by_rules is not None:
        missed = np.array([missed_by_rules(r) for r in rows], dtype=bool)
        fit['cv_questions_the_rules_miss'] = int((missed & (y == 1)).sum())
        fit['cv_of_them_read'] = int((missed & flagged & (y == 1)).sum())
    w, b = _logistic(X, y)
    log(f'question probe: {fit["rows"]} rows ({fit["questions"]} questions, {fit["orders"]} '
        f'orders); threshold {threshold:.2f} (no dev order above it out of fold); out of '
        f'fold it reads {fit["cv_questions_read"]} of {fit["questions"]} questions' +
        (f'; of the {fit["cv_questions_the_rules_miss"]} questions the rules miss, '
         f'{fit["cv_of_them_read"]}' if missed_by_rules is not None else ''))
    return QuestionProbe(w, b, threshold, weights_id, fit)
