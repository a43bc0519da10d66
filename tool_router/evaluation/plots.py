"""PNG plots of an evaluation (matplotlib, Agg backend); they read the report and the records."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tool_router.evaluation.dataset import LEVELS
from tool_router.evaluation.metrics import RequestRecord, top_counts
from tool_router.common.stats import percentiles

TOP_K = 12


def _plt() -> Any:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _colors(n: int) -> list[Any]:
    plt = _plt()
    cmap = plt.get_cmap('tab10')
    return [cmap(i % 10) for i in range(n)]


def _save(plt: Any, fig: Any, path: Path, dpi: int = 120) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _policies(records: Sequence[RequestRecord]) -> list[str]:
    return list(dict.fromkeys(r.policy for r in records))


def composite_by_level(report: Any, path: Path) -> Path:
    """Grouped bars: composite per level and macro, one bar per policy."""
    plt = _plt()
    names = list(report.policies)
    groups = [*LEVELS, 'macro']
    x = np.arange(len(groups))
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(8 + 0.5 * max(0, len(names) - 3), 5))
    for i, (name, color) in enumerate(zip(names, _colors(len(names)))):
        p = report.policies[name]
        vals = [p.levels[lv].composite if lv in p.levels else 0.0 for lv in LEVELS]
        vals.append(p.macro.composite)
        bars = ax.bar(x + (i - (len(names) - 1) / 2) * width, vals, width, label=name, color=color)
        # Many policies: vertical labels inside the bars, so that neighbours do not overlap.
        if len(names) <= 4:
            ax.bar_label(bars, fmt='%.2f', fontsize=8, padding=2)
        else:
            ax.bar_label(bars, fmt='%.2f', fontsize=7, padding=-24, rotation=90, color='white')
    n = report.dataset.levels
    ax.set_xticks(x, [f'{g}\n(n={n.get(g, 0)})' if g in n else 'macro\n(mean of levels)'
                      for g in groups])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel('composite (0.5 C + 0.25 Pr + 0.25 EM)')
    ax.set_title('Composite score per request level')
    ax.axvline(len(LEVELS) - 0.5, color='grey', lw=0.8, ls=':')
    ax.legend(title='policy', loc='upper center', bbox_to_anchor=(0.5, -0.14),
              ncols=min(len(names), 4), fontsize=8, frameon=False)
    ax.grid(axis='y', alpha=0.3)
    return _save(plt, fig, path)


def completeness_precision(records: Sequence[RequestRecord], path: Path) -> Path:
    """Box plots (with jittered points) of per-request completeness and precision per level."""
    plt = _plt()
    names = _policies(records)
    colors = _colors(len(names))
    fig, axes = plt.subplots(2, len(LEVELS), figsize=(4 * len(LEVELS), 6.5 + 0.2 * len(names)),
                             sharey=True)
    rng = np.random.default_rng(0)
    for row, metric in enumerate(('completeness', 'precision')):
        for col, level in enumerate(LEVELS):
            ax = axes[row][col]
            data = [[getattr(r, metric) for r in records if r.policy == p and r.level == level]
                    for p in names]
            pos = np.arange(1, len(names) + 1)
            box = ax.boxplot(data, positions=pos, widths=0.5, showmeans=True, patch_artist=True,
                             showfliers=False,
                             medianprops={'color': 'black'},
                             meanprops={'marker': 'D', 'markerfacecolor': 'white',
                                        'markeredgecolor': 'black', 'markersize': 5})
            for patch, color in zip(box['boxes'], colors):
                patch.set_facecolor((*color[:3], 0.35))
            for i, (vals, color) in enumerate(zip(data, colors)):
                ax.scatter(pos[i] + rng.uniform(-0.18, 0.18, len(vals)),
                           np.asarray(vals) + rng.uniform(-0.02, 0.02, len(vals)),
                           s=6, color=color, alpha=0.5)
            if len(names) > 4:  # long names side by side would overlap
                ax.set_xticks(pos, names, rotation=45, ha='right', fontsize=8)
            else:
                ax.set_xticks(pos, names)
            ax.set_ylim(-0.08, 1.08)
            ax.grid(axis='y', alpha=0.3)
            if row == 0:
                ax.set_title(f'{level} (n={len(data[0]) if data else 0})')
            if col == 0:
                ax.set_ylabel(f'{metric} per request')
    fig.suptitle('Per-request completeness and precision by level '
                 '(box = quartiles, line = median, diamond = mean, dots = requests)')
    return _save(plt, fig, path)


def latency(records: Sequence[RequestRecord], path: Path) -> Path:
    """Latency distribution per policy on a log axis."""
    plt = _plt()
    names = _policies(records)
    from matplotlib import ticker
    data = [[r.latency_ms for r in records if r.policy == p and r.latency_ms] for p in names]
    fig, ax = plt.subplots(figsize=(8, 1.5 + 0.9 * len(names)))
    keep = [(n, d) for n, d in zip(names, data) if d]
    if keep:
        box = ax.boxplot([d for _, d in keep], orientation='horizontal', widths=0.5,
                         patch_artist=True, whis=(1, 99), medianprops={'color': 'black'},
                         flierprops={'markersize': 3})
        for patch, color in zip(box['boxes'], _colors(len(keep))):
            patch.set_facecolor((*color[:3], 0.4))
        labels = []
        for name, d in keep:
            p50, p99 = percentiles(d, (50, 99)).values()
            labels.append(f'{name}\np50 {p50:.1f} ms\np99 {p99:.1f} ms')
        ax.set_yticks(range(1, len(keep) + 1), labels, fontsize=8)
        ax.set_xscale('log')
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f'{v:g}'))
        ax.xaxis.set_minor_formatter(ticker.FuncFormatter(
            lambda v, _: f'{v:g}' if str(f'{v:g}')[0] in '25' else ''))
        ax.tick_params(axis='x', which='both', labelsize=8)
    ax.set_xlabel('latency per request, ms (log scale; whiskers p1-p99)')
    ax.set_title('Routing latency per policy')
    ax.grid(axis='x', which='both', alpha=0.3)
    return _save(plt, fig, path)


def missed_extra(records: Sequence[RequestRecord], path: Path, k: int = TOP_K) -> Path:
    """Horizontal bars: the ``k`` most often missed and extra tools, per policy."""
    from matplotlib.ticker import MaxNLocator
    plt = _plt()
    names = _policies(records)
    height = max(3.0, 0.22 * k + 1.0)
    fig, axes = plt.subplots(len(names), 2, figsize=(11, height * len(names)), squeeze=False)
    for row, name in enumerate(names):
        rs = [r for r in records if r.policy == name]
        for col, (kind, color) in enumerate((('missed', 'tab:red'), ('extra', 'tab:orange'))):
            ax = axes[row][col]
            top = top_counts((getattr(r, kind) for r in rs), k)
            if top:
                labels, counts = zip(*top)
                ypos = np.arange(k - 1, k - 1 - len(top), -1)
                bars = ax.barh(ypos, counts, height=0.7, color=color)
                ax.bar_label(bars, fontsize=7, padding=2)
                ax.set_yticks(ypos, labels, fontsize=8)
                ax.set_ylim(-0.6, k - 0.4)
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            else:
                ax.text(0.5, 0.5, 'none', ha='center', va='center', transform=ax.transAxes)
                ax.set_yticks([])
            what = 'missed (in truth, not predicted)' if kind == 'missed' \
                else 'extra (predicted, not in truth)'
            ax.set_title(f'{name}: top {k} {what}', fontsize=10)
            ax.set_xlabel(f'number of requests (of {len(rs)} routed)')
            ax.grid(axis='x', alpha=0.3)
    return _save(plt, fig, path, dpi=110)


def write_plots(report: Any, records: Sequence[RequestRecord], out: Path) -> list[Path]:
    """Write every plot to ``out``; return their paths."""
    return [composite_by_level(report, out / 'composite_by_level.png'),
            completeness_precision(records, out / 'completeness_precision.png'),
            latency(records, out / 'latency.png'),
            missed_extra(records, out / 'missed_extra.png')]
