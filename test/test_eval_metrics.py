"""Metrics and aggregation on hand-made cases: no model, no ROS."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tool_router.common.explanation import LLMFacts
from tool_router.common.errors import RequestError
from tool_router.evaluation.metrics import (LLMFlags, bootstrap_ci, level_metrics, macro,
                                            make_record, paired_diffs, policy_report, score)
from tool_router.evaluation.runner import resolve_policies


def rec(id, level, truth, tools, policy='p', dropped=(), **kw):
    return make_record(id=id, level=level, request=f'request {id}', truth=truth, policy=policy,
                       tools=tools, dropped=dropped, **kw)


def test_perfect_answer_scores_one():
    s = score(['land', 'takeoff'], ['takeoff', 'land'])
    assert (s.em, s.completeness, s.precision, s.composite) == (1.0, 1.0, 1.0, 1.0)


def test_empty_prediction_scores_zero_with_zero_precision():
    s = score(['land'], [])
    assert (s.em, s.completeness, s.precision, s.composite) == (0.0, 0.0, 0.0, 0.0)


def test_partial_answer_weights_completeness():
    # truth {a, b, c}, predicted {a, b, x}: C = 2/3, Pr = 2/3, EM = 0
    s = score(['a', 'b', 'c'], ['a', 'b', 'x'])
    assert s.completeness == pytest.approx(2 / 3)
    assert s.precision == pytest.approx(2 / 3)
    assert s.composite == pytest.approx(0.5 * 2 / 3 + 0.25 * 2 / 3)


def test_superset_is_complete_but_not_exact():
    s = score(['land'], ['land', 'rgb_camera'])
    assert (s.em, s.completeness, s.precision) == (0.0, 1.0, 0.5)
    assert s.composite == pytest.approx(0.625)


def test_invented_names_count_as_false_positives():
    r = rec('x', 'direct', ['land'], ['land'], dropped=['teleport'])
    assert r.predicted == ['land', 'teleport']
    assert r.extra == ['teleport'] and r.invented == ['teleport']
    assert (r.em, r.precision) == (0.0, 0.5)
    report = policy_report([r, rec('y', 'direct', ['land'], [], dropped=['fly_home', 'zap'])])
    assert report.invented.names == 3 and report.invented.requests == 2


def test_missed_and_extra_lists():
    r = rec('x', 'compound', ['a', 'b', 'c'], ['c', 'd'])
    assert r.missed == ['a', 'b'] and r.extra == ['d']


def test_out_of_scope_scored_by_empty_answer_only():
    empty = rec('o1', 'out_of_scope', [], [])
    busy = rec('o2', 'out_of_scope', [], ['land'])
    assert (empty.composite, busy.composite) == (1.0, 0.0)
    assert empty.completeness is None and empty.precision is None
    report = policy_report([empty, busy, rec('d', 'direct', ['land'], ['land'])])
    assert report.out_of_scope.n == 2 and report.out_of_scope.empty_rate == 0.5
    # out-of-scope never enters the levels or the macro
    assert set(report.levels) == {'direct'} and report.macro.composite == 1.0


def test_levels_and_macro_average():
    records = [
        rec('d1', 'direct', ['land'], ['land']),                    # 1.0
        rec('d2', 'direct', ['land'], []),                          # 0.0
        rec('c1', 'consequential', ['a', 'b'], ['a']),              # 0.5*.5 + .25*1 = 0.5
        rec('k1', 'compound', ['a', 'b', 'c'], ['a', 'b', 'c']),    # 1.0
    ]
    levels = level_metrics(records)
    assert levels['direct'].n == 2 and levels['direct'].composite == 0.5
    assert levels['consequential'].composite == pytest.approx(0.5)
    assert levels['compound'].composite == 1.0
    m = macro(levels)
    assert m.composite == pytest.approx((0.5 + 0.5 + 1.0) / 3)   # levels weigh the same
    assert m.em == pytest.approx((0.5 + 0 + 1) / 3)


def test_in_scope_empty_rate_and_latency():
    records = [rec('d1', 'direct', ['land'], [], latency_ms=10.0),
               rec('d2', 'direct', ['land'], ['land'], latency_ms=30.0),
               rec('o', 'out_of_scope', [], [], latency_ms=None)]
    report = policy_report(records)
    assert report.in_scope_empty_rate == 0.5
    assert report.latency_ms.p50 == 20.0 and report.latency_ms.n == 2


def test_llm_flags_reported_only_when_present():
    local = policy_report([rec('d', 'direct', ['land'], ['land'])])
    assert local.llm is None
    flags = [LLMFlags.from_facts(LLMFacts(malformed=True, invented=['x'])),
             LLMFlags.from_facts(LLMFacts(timeout=True, error='timed out')),
             LLMFlags.from_facts(LLMFacts())]
    records = [rec(str(i), 'direct', ['land'], ['land'], llm=f) for i, f in enumerate(flags)]
    llm = policy_report(records).llm
    assert llm.n == 3
    assert llm.malformed_rate == pytest.approx(1 / 3) and llm.invented_rate == pytest.approx(1 / 3)
    assert llm.timeout_rate == pytest.approx(1 / 3) and llm.error_rate == pytest.approx(1 / 3)
    assert LLMFlags.from_facts(None) is None


def test_repeats_spread():
    records = [rec('d', 'direct', ['land'], ['land'], repeat=0),
               rec('d', 'direct', ['land'], [], repeat=1)]
    report = policy_report(records)
    assert report.repeats.n == 2
    assert report.repeats.macro_composite_per_repeat == [1.0, 0.0]
    assert report.repeats.macro_composite_std == pytest.approx(0.5)
    assert report.repeats.request_composite_std_mean == pytest.approx(0.5)
    assert report.macro.composite == 0.5
    assert policy_report(records[:1]).repeats is None


def test_style_slices():
    records = [rec('a', 'direct', ['land'], ['land'], style='typo'),
               rec('b', 'direct', ['land'], [], style='typo'),
               rec('c', 'out_of_scope', [], [], style='injection')]
    styles = policy_report(records).styles
    assert styles['typo'].n == 2 and styles['typo'].composite == 0.5
    assert styles['injection'].n == 0 and styles['injection'].out_of_scope_empty_rate == 1.0


def test_bootstrap_contains_true_delta_and_is_deterministic():
    rng = np.random.default_rng(1)
    diffs = 0.1 + rng.normal(0, 0.3, 400)      # true mean 0.1
    lo, hi = bootstrap_ci(diffs, 2000, seed=7)
    assert lo < 0.1 < hi
    assert hi - lo < 0.1
    assert bootstrap_ci(diffs, 2000, seed=7) == (lo, hi)
    assert bootstrap_ci(diffs, 2000, seed=8) != (lo, hi)
    assert all(math.isnan(x) for x in bootstrap_ci([], 100))


def test_paired_differences_over_in_scope_requests():
    a = [rec(f'r{i}', 'direct', ['land'], ['land'], policy='a') for i in range(20)]
    b = [rec(f'r{i}', 'direct', ['land'], [] if i < 5 else ['land'], policy='b')
         for i in range(20)]
    oos = [rec('o', 'out_of_scope', [], ['land'], policy=p) for p in 'ab']
    (d,) = paired_diffs({'a': a + oos[:1], 'b': b + oos[1:]}, 2000, seed=3)
    assert (d.a, d.b, d.n) == ('a', 'b', 20)
    assert d.delta_composite == pytest.approx(0.25)      # 5 of 20 requests differ by 1.0
    assert d.ci95[0] <= 0.25 <= d.ci95[1] and d.ci95[0] > 0


def test_score_rejects_empty_truth():
    with pytest.raises(ValueError):
        score([], ['land'])


def test_default_policy_resolves_to_its_real_name():
    assert resolve_policies(['cdbv1', 'default'], 'cdbv3', ['cdbv1', 'cdbv3']) == \
        [('cdbv1', False), ('cdbv3', True)]
    # listing the default twice (by name and as 'default') gives one entry
    assert resolve_policies(['default', 'cdbv3'], 'cdbv3', ['cdbv3']) == [('cdbv3', True)]
    assert resolve_policies(['cdbv3'], 'cdbv3', ['cdbv3']) == [('cdbv3', True)]
    with pytest.raises(RequestError, match='nope'):
        resolve_policies(['cdbv1', 'nope'], 'cdbv3', ['cdbv1', 'cdbv3'])
