"""Turn collected records into ``report.json``, ``report.md`` and ``predictions.jsonl``.

Reads records only; it never routes.
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from tool_router.evaluation.dataset import LEVELS
from tool_router.evaluation.metrics import (PairedDiff, PolicyReport, RequestRecord, paired_diffs,
                                            policy_report)

PLOTS = {
    'composite_by_level.png': 'Composite per level and macro',
    'completeness_precision.png': 'Completeness and precision per request',
    'latency.png': 'Latency per request',
    'missed_extra.png': 'Most frequently missed and extra tools',
}


class DatasetSummary(BaseModel):
    """Size and composition of the evaluated dataset."""

    model_config = ConfigDict(extra='forbid')

    n: int
    levels: dict[str, int]
    styles: dict[str, int] = Field(default_factory=dict)
    sources: list[str]


class RunInfo(BaseModel):
    """Where and how a run was made (commit, machine, model, settings)."""

    model_config = ConfigDict(extra='forbid')

    mode: str = Field(description='in_process | live | recorded')
    repeats: int = 1
    seed: int = 0
    bootstrap_resamples: int = 2000
    command: str = ''
    warnings: list[str] = Field(
        default_factory=list,
        description='Input the run could not use as given, counted (e.g. recorded selections '
        'without their request).',
    )


class Report(BaseModel):
    """Everything ``report.json`` holds."""

    model_config = ConfigDict(extra='forbid')

    dataset: DatasetSummary
    run: RunInfo
    policies: dict[str, PolicyReport]
    paired: list[PairedDiff]


def group(records: Sequence[RequestRecord]) -> dict[str, list[RequestRecord]]:
    """Records per policy, in first-seen order."""
    out: dict[str, list[RequestRecord]] = defaultdict(list)
    for r in records:
        out[r.policy].append(r)
    return dict(out)


def build_report(records: Sequence[RequestRecord], dataset: dict[str, Any], run: RunInfo,
                 defaults: Sequence[str] = ()) -> Report:
    """Aggregate the records of every policy and compare every pair."""
    by_policy = group(records)
    return Report(
        dataset=DatasetSummary(**dataset), run=run,
        policies={p: policy_report(rs, default=p in defaults) for p, rs in by_policy.items()},
        paired=paired_diffs(by_policy, run.bootstrap_resamples, run.seed))


def write_predictions(records: Sequence[RequestRecord], path: Path) -> None:
    """Write one JSON line per routed request (the per-case records)."""
    with path.open('w', encoding='utf-8') as fh:
        for r in records:
            fh.write(r.model_dump_json(exclude_none=True) + '\n')


# -- markdown --------------------------------------------------------------------------
def _f(x: float | None, digits: int = 3) -> str:
    return '-' if x is None or (isinstance(x, float) and math.isnan(x)) else f'{x:.{digits}f}'


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ['| ' + ' | '.join(header) + ' |', '|' + '|'.join('---' for _ in header) + '|',
            *('| ' + ' | '.join(row) + ' |' for row in rows)]


def _name(name: str, p: PolicyReport) -> str:
    return f'{name} (default)' if p.default else name


def composite_table(report: Report) -> list[str]:
    """The paper's Table 1: composite per level and macro."""
    rows = [[_name(n, p),
             *(_f(p.levels[lv].composite) if lv in p.levels else '-' for lv in LEVELS),
             _f(p.macro.composite)] for n, p in report.policies.items()]
    return _table(['policy', *LEVELS, 'macro'], rows)


def detail_table(report: Report) -> list[str]:
    """Markdown table: the paper's metrics per policy and level."""
    header = ['policy', 'level', 'n', 'EM', 'completeness', 'precision', 'composite']
    rows = []
    for n, p in report.policies.items():
        for lv in LEVELS:
            m = p.levels.get(lv)
            if m:
                rows.append([n, lv, str(m.n), _f(m.em), _f(m.completeness), _f(m.precision),
                             _f(m.composite)])
        rows.append([n, '**macro**', '', _f(p.macro.em), _f(p.macro.completeness),
                     _f(p.macro.precision), _f(p.macro.composite)])
    return _table(header, rows)


def behaviour_table(report: Report) -> list[str]:
    """Markdown table: empty answers, invented names, refusals and latency per policy."""
    header = ['policy', 'out-of-scope empty rate (n)', 'in-scope empty rate', 'invented names',
              'refused', 'latency p50 / p90 / p99 ms']
    rows = []
    for n, p in report.policies.items():
        lat = p.latency_ms
        rows.append([n, f'{_f(p.out_of_scope.empty_rate)} ({p.out_of_scope.n})',
                     _f(p.in_scope_empty_rate), str(p.invented.names), str(p.errors),
                     f'{_f(lat.p50, 1)} / {_f(lat.p90, 1)} / {_f(lat.p99, 1)}'])
    return _table(header, rows)


def llm_table(report: Report) -> list[str]:
    """Markdown table: LLM reply statistics (empty when no LLM was used)."""
    rows = [[n, str(p.llm.n), _f(p.llm.malformed_rate), _f(p.llm.invented_rate),
             _f(p.llm.timeout_rate), _f(p.llm.error_rate)]
            for n, p in report.policies.items() if p.llm]
    if not rows:
        return []
    return _table(['policy', 'LLM replies', 'malformed', 'with invented names', 'timeout',
                   'error'], rows)


def repeat_table(report: Report) -> list[str]:
    """Markdown table: spread over repeats (empty without repeats)."""
    rows = [[n, str(p.repeats.n), _f(p.macro.composite), _f(p.repeats.macro_composite_std, 4),
             _f(p.repeats.request_composite_std_mean, 4)]
            for n, p in report.policies.items() if p.repeats]
    if not rows:
        return []
    return _table(['policy', 'repeats', 'macro composite (mean)', 'std over repeats',
                   'mean per-request std'], rows)


def paired_table(report: Report) -> list[str]:
    """Markdown table: paired differences with bootstrap intervals."""
    if not report.paired:
        return []
    rows = [[d.a, d.b, str(d.n), f'{d.delta_composite:+.3f}',
             f'[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]',
             'yes' if d.ci95[0] > 0 or d.ci95[1] < 0 else 'no'] for d in report.paired]
    return _table(['a', 'b', 'n', 'delta composite (a - b)', '95% CI', 'excludes 0'], rows)


def style_table(report: Report) -> list[str]:
    """Markdown table: composite score per writing style."""
    styles = sorted({s for p in report.policies.values() for s in p.styles})
    if not styles:
        return []
    names = list(report.policies)
    first = report.policies[names[0]].styles
    rows = []
    for s in styles:
        sl = first.get(s)
        n = f'{sl.n}' + (f' (+{sl.out_of_scope_n} oos)' if sl and sl.out_of_scope_n else '') \
            if sl else '-'
        rows.append([s, n, *(_style_cell(report.policies[p].styles.get(s)) for p in names)])
    return _table(['style', 'n in scope', *names], rows)


def _style_cell(sl: Any) -> str:
    if sl is None:
        return '-'
    cell = _f(sl.composite)
    if sl.out_of_scope_n:
        cell += f' / oos {_f(sl.out_of_scope_empty_rate, 2)}'
    return cell


def render_markdown(report: Report, plots: Sequence[str] = tuple(PLOTS)) -> str:
    """The human-readable report."""
    d = report.dataset
    levels = ', '.join(f'{k} {v}' for k, v in d.levels.items())
    lines = ['# Routing evaluation', '',
             f"Dataset: {', '.join(d.sources)} ({d.n} requests: {levels}). "
             f'Mode: {report.run.mode}, repeats: {report.run.repeats}, '
             f'bootstrap seed {report.run.seed} ({report.run.bootstrap_resamples} resamples).', '']
    if report.run.command:
        lines += ['```', report.run.command, '```', '']
    if report.run.warnings:
        lines += ['Warnings:', ''] + [f'- {w}' for w in report.run.warnings] + ['']
    sections = [
        ('Composite per level (paper Table 1)',
         'Composite L = 0.5 completeness + 0.25 precision + 0.25 EM; macro = mean of the three '
         'levels.', composite_table(report)),
        ('EM, completeness and precision per level', '', detail_table(report)),
        ('Out of scope, empty answers, invented names, latency',
         'Out-of-scope score = share answered with no tool. In-scope empty rate = share of '
         'in-scope requests answered with no tool. Invented names (dropped by the validator) are '
         'scored as false positives.', behaviour_table(report)),
        ('LLM replies', '', llm_table(report)),
        ('Spread over repeats', '', repeat_table(report)),
        ('Paired differences (in-scope requests)',
         'delta = mean over requests of composite(a) - composite(b), each request averaged over '
         'repeats; 95% percentile bootstrap interval over requests.', paired_table(report)),
        ('Composite per request style',
         'Mean composite of the in-scope requests of each style; "oos" = out-of-scope empty rate '
         'for that style.', style_table(report)),
    ]
    for title, note, table in sections:
        if table:
            lines += [f'## {title}', '', *([note, ''] if note else []), *table, '']
    lines += ['## Plots', '']
    lines += [f'![{PLOTS.get(p, p)}]({p})' for p in plots] + ['']
    return '\n'.join(lines)


def write_report(report: Report, records: Sequence[RequestRecord], out: str | Path,
                 plots: bool = True) -> Path:
    """Write report.json, predictions.jsonl, the plots and report.md to ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / 'report.json').write_text(report.model_dump_json(indent=2) + '\n', encoding='utf-8')
    write_predictions(records, out / 'predictions.jsonl')
    written: list[str] = []
    if plots:
        from tool_router.evaluation.plots import write_plots
        written = [p.name for p in write_plots(report, records, out)]
    (out / 'report.md').write_text(render_markdown(report, written), encoding='utf-8')
    return out
