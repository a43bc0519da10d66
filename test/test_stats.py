"""The one percentile helper (tool_router/common/stats.py)."""

import math

import numpy as np

from tool_router.common.stats import percentile, percentiles


def test_percentiles_match_linear_interpolation():
    assert percentiles([1, 2, 3, 4], [50, 100]) == {'p50': 2.5, 'p100': 4}
    assert percentiles([4, 1, 3, 2], (12.5,)) == {'p12.5': 1.375}
    assert percentiles([]) == {}


def test_default_quantiles_are_numpys():
    values = [float(v) for v in np.random.default_rng(0).exponential(10.0, 101)]
    got = percentiles(values)
    assert list(got) == ['p50', 'p90', 'p99']
    assert got['p90'] == float(np.percentile(values, 90))


def test_one_percentile_of_nothing_is_nan():
    assert percentile([3.0, 1.0], 50) == 2.0
    assert math.isnan(percentile([], 99))
