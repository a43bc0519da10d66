"""The one objective every fit and tuning ranks by, built on the one ``composite()``.

``objective = macro composite + 0.25 x out-of-scope empty rate - 0.25 x in-scope empty rate``:
abstaining correctly is worth something, and an empty answer to a request the
catalog serves (the failure users notice first) costs as much again as its lost
composite. The macro composite is the mean over the in-scope levels of each
level's mean composite. ``tool-router fit lcr`` ranks thresholds by the objective;
``tool-router fit cdb`` ranks by its macro part alone (docs/CONSTANTS.md).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from tool_router.evaluation.dataset import LEVELS, Example
from tool_router.evaluation.metrics import OUT_OF_SCOPE, composite

OUT_OF_SCOPE_EMPTY_WEIGHT = 0.25
IN_SCOPE_EMPTY_WEIGHT = 0.25


def objective(
    examples: Sequence[Example],
    predictions: Iterable[Iterable[str]],
    oos_weight: float = OUT_OF_SCOPE_EMPTY_WEIGHT,
) -> tuple[float, float, float]:
    """(objective, macro composite, out-of-scope empty rate) of ``predictions``.

    ``oos_weight``: the out-of-scope empty rate's weight (``fit lcr --oos-weight``: a fit
    that abstains more readily, for more in-scope empties).
    """
    preds = [set(p) for p in predictions]
    levels = np.array([ex.level for ex in examples])
    comp = np.array([0.0 if ex.level == OUT_OF_SCOPE else composite(ex.tools, p)
                     for ex, p in zip(examples, preds)])
    empty = np.array([not p for p in preds], dtype=bool)
    return objective_arrays(levels, comp, empty, oos_weight)


def objective_arrays(
    levels: np.ndarray,
    comp: np.ndarray,
    empty: np.ndarray,
    oos_weight: float = OUT_OF_SCOPE_EMPTY_WEIGHT,
) -> tuple[float, float, float]:
    """:func:`objective` from per-request levels, composites (0 out of scope) and empty flags.

    For sweeps that reuse the composites (the lcr scope threshold); with no
    out-of-scope request the out-of-scope empty rate counts as 1.
    """
    macro = float(np.mean([comp[levels == lv].mean() for lv in LEVELS if (levels == lv).any()]))
    oos = levels == OUT_OF_SCOPE
    rate = float(empty[oos].mean()) if oos.any() else 1.0
    in_empty = float(empty[~oos].mean()) if (~oos).any() else 0.0
    score = macro + oos_weight * rate - IN_SCOPE_EMPTY_WEIGHT * in_empty
    return score, macro, rate
