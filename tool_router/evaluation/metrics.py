"""Scoring and aggregation of routing results: pure functions over records, no ROS, no model.

Metrics follow ``ANNOTATION.md``: with truth ``T`` and prediction ``P``,
``EM = [P == T]``, ``C = |P & T| / |T|``, ``Pr = |P & T| / |P|`` (0 when ``P`` is
empty) and ``L = 0.5 C + 0.25 Pr + 0.25 EM``. Out-of-scope requests (``T``
empty) are scored only by whether ``P`` is empty and never enter the level
averages. The prediction scored is the validated tools plus any names the
validator dropped (invented names), the latter counted as false positives.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import combinations
from typing import Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tool_router.evaluation.dataset import LEVELS
from tool_router.common.explanation import LLMFacts
from tool_router.common.stats import percentiles

OUT_OF_SCOPE = 'out_of_scope'
LATENCY_QUANTILES = (50, 90, 99)


class _Model(BaseModel):
    model_config = ConfigDict(extra='forbid')


# -- per request -------------------------------------------------------------
class Scores(_Model):
    """The four per-request metrics of an in-scope request."""

    em: float
    completeness: float
    precision: float
    composite: float


def _parts(t: set[str], p: set[str]) -> tuple[float, float, float, float]:
    hit = len(t & p)
    em = float(p == t)
    completeness = hit / len(t)
    precision = hit / len(p) if p else 0.0
    return em, completeness, precision, 0.5 * completeness + 0.25 * precision + 0.25 * em


def composite(truth: Iterable[str], predicted: Iterable[str]) -> float:
    """The composite L of one request; out of scope (``truth`` empty): 1 when ``P`` is empty.

    The one implementation: reports, fitting, tuning and the hybrid gate fit use it.
    """
    t, p = set(truth), set(predicted)
    if not t:
        return float(not p)
    return _parts(t, p)[3]


def score(truth: Iterable[str], predicted: Iterable[str]) -> Scores:
    """EM, completeness, precision and composite of one in-scope request (``truth`` non-empty)."""
    t, p = set(truth), set(predicted)
    if not t:
        raise ValueError('score() needs a non-empty truth set (out_of_scope: see make_record)')
    em, completeness, precision, comp = _parts(t, p)
    return Scores(em=em, completeness=completeness, precision=precision, composite=comp)


def predicted_set(tools: Sequence[str], dropped: Sequence[str]) -> list[str]:
    """The set scored: validated tools plus dropped (invented) names, without duplicates."""
    return list(dict.fromkeys([*tools, *dropped]))


class LLMFlags(_Model):
    """What an LLM policy reported about its reply (from :class:`LLMFacts`)."""

    malformed: bool = False
    invented: bool = False
    timeout: bool = False
    error: bool = False

    @classmethod
    def from_facts(cls, llm: LLMFacts | None) -> 'LLMFlags | None':
        """Flags of an LLM call; ``None`` when the policy made none."""
        if llm is None:
            return None
        return cls(malformed=llm.malformed, invented=bool(llm.invented), timeout=llm.timeout,
                   error=bool(llm.error))


class RequestRecord(_Model):
    """One routed request under one policy and repeat: what the router said and its scores."""

    id: str = Field(description='Example id (pairs the same request across policies).')
    level: str
    request: str
    style: str = ''
    policy: str
    repeat: int = 0
    truth: list[str]
    predicted: list[str] = Field(description='Validated tools plus invented names.')
    invented: list[str] = Field(default_factory=list, description='Names the validator dropped.')
    scores: list[float] = Field(default_factory=list)
    fragments: list[str] = Field(default_factory=list)
    em: float = Field(description='Exact match; for out_of_scope, 1 when the answer is empty.')
    completeness: float | None = Field(None, description='None for out_of_scope.')
    precision: float | None = Field(None, description='None for out_of_scope.')
    composite: float = Field(description='Composite; out_of_scope: 1 when the answer is empty.')
    missed: list[str] = Field(default_factory=list)
    extra: list[str] = Field(default_factory=list)
    latency_ms: float | None = None
    llm: LLMFlags | None = None
    error: str = Field('', description='Why the request was refused; scored as an empty answer.')

    @property
    def in_scope(self) -> bool:
        """Whether the request has tools to find (not out of scope)."""
        return self.level != OUT_OF_SCOPE


def make_record(*, id: str, level: str, request: str, truth: Sequence[str], policy: str,
                tools: Sequence[str], dropped: Sequence[str] = (),
                **fields: object) -> RequestRecord:
    """Score one answer; ``fields`` are the record's other fields (style, repeat, ...)."""
    predicted = predicted_set(tools, dropped)
    missed = sorted(set(truth) - set(predicted))
    extra = sorted(set(predicted) - set(truth))
    if level == OUT_OF_SCOPE:
        empty = float(not predicted)
        metrics: dict[str, float | None] = {'em': empty, 'composite': empty,
                                            'completeness': None, 'precision': None}
    else:
        metrics = dict(score(truth, predicted))
    return RequestRecord(id=id, level=level, request=request, truth=list(truth), policy=policy,
                         predicted=predicted, invented=list(dropped), missed=missed, extra=extra,
                         **metrics, **fields)


# -- aggregation ---------------------------------------------------------------
class LevelMetrics(_Model):
    """The paper's metrics over the requests of one level."""

    n: int
    em: float
    completeness: float
    precision: float
    composite: float


class MacroMetrics(_Model):
    """Level metrics averaged over the in-scope levels (each level weighs the same)."""

    em: float
    completeness: float
    precision: float
    composite: float


class OutOfScope(_Model):
    """How out-of-scope requests were answered."""

    n: int
    empty_rate: float | None = Field(description='Share answered with no tool (None when n=0).')


class Latency(_Model):
    """Routing latency percentiles in milliseconds."""

    p50: float | None
    p90: float | None
    p99: float | None
    n: int = 0


class Invented(_Model):
    """Names outside the catalog that a policy proposed."""

    names: int = Field(description='Invented names over all requests (and repeats).')
    requests: int = Field(description='Requests (x repeats) with at least one invented name.')


class LLMStats(_Model):
    """How the LLM behaved, over the replies that went through it."""

    n: int = Field(description='Replies that went through an LLM.')
    malformed_rate: float
    invented_rate: float
    timeout_rate: float
    error_rate: float


class RepeatStats(_Model):
    """Spread of the scores over repeated runs."""

    n: int
    macro_composite_per_repeat: list[float]
    macro_composite_std: float
    request_composite_std_mean: float = Field(
        description='Mean over in-scope requests of the std of their composite across repeats.')


class StyleSlice(_Model):
    """Scores over the in-scope requests of one writing style."""

    n: int = Field(description='In-scope requests of this style.')
    composite: float | None
    out_of_scope_n: int = 0
    out_of_scope_empty_rate: float | None = None


class PolicyReport(_Model):
    """Everything the report says about one policy."""

    default: bool = False
    levels: dict[str, LevelMetrics]
    macro: MacroMetrics
    out_of_scope: OutOfScope
    in_scope_empty_rate: float | None
    latency_ms: Latency
    invented: Invented
    llm: LLMStats | None = None
    errors: int = Field(0, description='Requests refused by the router (scored as empty).')
    repeats: RepeatStats | None = None
    styles: dict[str, StyleSlice] = Field(default_factory=dict)
    top_missed: list[tuple[str, int]] = Field(default_factory=list)
    top_extra: list[tuple[str, int]] = Field(default_factory=list)


class PairedDiff(_Model):
    """Paired difference of the composite score between two policies, with its interval."""

    a: str
    b: str
    n: int
    delta_composite: float = Field(description='mean(composite_a - composite_b), in-scope.')
    ci95: tuple[float, float]


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return float(sum(vals) / len(vals)) if vals else float('nan')


def level_metrics(records: Sequence[RequestRecord]) -> dict[str, LevelMetrics]:
    """Mean metrics per in-scope level (levels with no request are left out)."""
    out: dict[str, LevelMetrics] = {}
    for level in LEVELS:
        rs = [r for r in records if r.level == level]
        if rs:
            out[level] = LevelMetrics(
                n=len(rs), em=_mean(r.em for r in rs),
                completeness=_mean(r.completeness or 0.0 for r in rs),
                precision=_mean(r.precision or 0.0 for r in rs),
                composite=_mean(r.composite for r in rs))
    return out


def macro(levels: dict[str, LevelMetrics]) -> MacroMetrics:
    """Unweighted mean over the levels present (each level counts the same)."""
    present = list(levels.values())
    return MacroMetrics(**{k: _mean(getattr(m, k) for m in present)
                           for k in ('em', 'completeness', 'precision', 'composite')})


def out_of_scope(records: Sequence[RequestRecord]) -> OutOfScope:
    """How out-of-scope requests were answered (empty answer = right)."""
    rs = [r for r in records if not r.in_scope]
    rate = _mean(float(not r.predicted) for r in rs) if rs else None
    return OutOfScope(n=len(rs), empty_rate=rate)


def in_scope_empty_rate(records: Sequence[RequestRecord]) -> float | None:
    """Share of in-scope requests answered with no tool (None when there are none)."""
    rs = [r for r in records if r.in_scope]
    return _mean(float(not r.predicted) for r in rs) if rs else None


def latency(values: Iterable[float | None]) -> Latency:
    """p50/p90/p99 of the known latencies (None when there are none)."""
    vals = [v for v in values if v is not None]
    q = percentiles(vals, LATENCY_QUANTILES)
    return Latency(p50=q.get('p50'), p90=q.get('p90'), p99=q.get('p99'), n=len(vals))


def llm_stats(records: Sequence[RequestRecord]) -> LLMStats | None:
    """LLM reply statistics, or None when no reply went through an LLM."""
    flags = [r.llm for r in records if r.llm is not None]
    if not flags:
        return None
    return LLMStats(n=len(flags), malformed_rate=_mean(float(f.malformed) for f in flags),
                    invented_rate=_mean(float(f.invented) for f in flags),
                    timeout_rate=_mean(float(f.timeout) for f in flags),
                    error_rate=_mean(float(f.error) for f in flags))


def request_means(records: Sequence[RequestRecord]) -> dict[str, float]:
    """In-scope request id -> composite averaged over repeats."""
    by_id: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.in_scope:
            by_id[r.id].append(r.composite)
    return {k: _mean(v) for k, v in by_id.items()}


def repeat_stats(records: Sequence[RequestRecord]) -> RepeatStats | None:
    """Spread over repeats; None with a single repeat."""
    by_repeat: dict[int, list[RequestRecord]] = defaultdict(list)
    for r in records:
        by_repeat[r.repeat].append(r)
    if len(by_repeat) < 2:
        return None
    per_repeat = [macro(level_metrics(by_repeat[k])).composite for k in sorted(by_repeat)]
    by_id: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.in_scope:
            by_id[r.id].append(r.composite)
    return RepeatStats(n=len(by_repeat), macro_composite_per_repeat=per_repeat,
                       macro_composite_std=float(np.std(per_repeat)),
                       request_composite_std_mean=_mean(float(np.std(v)) for v in by_id.values()))


def style_slices(records: Sequence[RequestRecord]) -> dict[str, StyleSlice]:
    """Composite (in scope) and empty rate (out of scope) per dataset ``style``."""
    by_style: dict[str, list[RequestRecord]] = defaultdict(list)
    for r in records:
        if r.style:
            by_style[r.style].append(r)
    out = {}
    for style in sorted(by_style):
        inside = [r.composite for r in by_style[style] if r.in_scope]
        oos = out_of_scope(by_style[style])
        out[style] = StyleSlice(n=len(inside), composite=_mean(inside) if inside else None,
                                out_of_scope_n=oos.n, out_of_scope_empty_rate=oos.empty_rate)
    return out


def top_counts(lists: Iterable[Sequence[str]], k: int = 15) -> list[tuple[str, int]]:
    """The ``k`` most frequent names over lists, most frequent first (ties by name)."""
    counts = Counter(name for names in lists for name in names)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def policy_report(records: Sequence[RequestRecord], default: bool = False) -> PolicyReport:
    """All aggregates of one policy's records (every repeat)."""
    levels = level_metrics(records)
    return PolicyReport(
        default=default, levels=levels, macro=macro(levels), out_of_scope=out_of_scope(records),
        in_scope_empty_rate=in_scope_empty_rate(records),
        latency_ms=latency(r.latency_ms for r in records),
        invented=Invented(names=sum(len(r.invented) for r in records),
                          requests=sum(1 for r in records if r.invented)),
        llm=llm_stats(records), errors=sum(1 for r in records if r.error),
        repeats=repeat_stats(records), styles=style_slices(records),
        top_missed=top_counts(r.missed for r in records),
        top_extra=top_counts(r.extra for r in records))


# -- paired comparison ---------------------------------------------------------
def bootstrap_ci(diffs: Sequence[float], resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs`` (resampling items)."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(resamples, d.size))
    means = d[idx].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def paired_diffs(records_by_policy: Mapping[str, Sequence[RequestRecord]], resamples: int = 2000,
                 seed: int = 0) -> list[PairedDiff]:
    """Paired delta = mean(a - b) of per-request composite (mean over repeats), per pair."""
    means = {p: request_means(rs) for p, rs in records_by_policy.items()}
    out = []
    for a, b in combinations(records_by_policy, 2):
        ids = [i for i in means[a] if i in means[b]]
        diffs = [means[a][i] - means[b][i] for i in ids]
        delta = _mean(diffs) if diffs else math.nan
        out.append(PairedDiff(a=a, b=b, n=len(ids), delta_composite=delta,
                              ci95=bootstrap_ci(diffs, resamples, seed)))
    return out
