"""The objective every fit and tuning ranks by, built on the one ``composite()``."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from tool_router.evaluation.dataset import LEVELS, Example
from tool_router.evaluation.metrics import OUT_OF_SCOPE, composite


def objective(
    examples: Sequence[Example], predictions: Iterable[Iterable[str]]
) -> tuple[float, float, float]:
    """(objective, macro composite, out-of-scope empty rate); objective = macro + 0.25 oos."""
    per_level: dict[str, list[float]] = {lv: [] for lv in LEVELS}
    oos: list[float] = []
    for ex, pred in zip(examples, predictions):
        if ex.level == OUT_OF_SCOPE:
            oos.append(composite((), pred))
        else:
            per_level[ex.level].append(composite(ex.tools, pred))
    macro = float(np.mean([np.mean(v) for v in per_level.values() if v]))
    rate = float(np.mean(oos)) if oos else 1.0
    return macro + 0.25 * rate, macro, rate
