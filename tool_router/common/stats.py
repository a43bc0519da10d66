"""Percentiles, written once for the whole code base.

Latency figures (evaluation reports, executor trace summaries, the router's
diagnostics, the benchmarks) all come from :func:`percentiles`: numpy's default
(linear interpolation between the closest ranks), keyed ``p50``, ``p90``, ...
"""

from __future__ import annotations

from typing import Iterable

import numpy as np


def percentiles(values: Iterable[float], qs: Iterable[float] = (50, 90, 99)) -> dict[str, float]:
    """``{'p50': ..., 'p90': ..., 'p99': ...}`` of ``values``; ``{}`` when there are none."""
    data = np.asarray(list(values), dtype=float)
    if not data.size:
        return {}
    qs = tuple(qs)
    return {f'p{q:g}': float(v) for q, v in zip(qs, np.percentile(data, qs))}


def percentile(values: Iterable[float], q: float) -> float:
    """One percentile of ``values``; NaN when there are none."""
    return percentiles(values, (q,)).get(f'p{q:g}', float('nan'))
