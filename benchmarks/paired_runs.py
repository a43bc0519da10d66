"""Paired comparison of two evaluation runs of one policy on the same split.

    python benchmarks/paired_runs.py BEFORE/predictions.jsonl AFTER/predictions.jsonl \
        [--policy lcr]

Reads two ``tool-router eval`` outputs (predictions.jsonl, one line per request and policy) and
prints, over the in-scope requests both hold: the mean change of the composite score (after -
before) with a 95% percentile bootstrap interval over requests (2,000 resamples, seed 0), the
requests whose answer changed and how many of them scored better or worse, and the empty
answers in scope and out of scope before and after. This is the "paired, in scope" column of
benchmarks/RESULTS.md; ``--policy *`` reads every line (a run of one policy named otherwise).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any


def load(path: Path, policy: str) -> dict[str, dict[str, Any]]:
    """The records of ``policy`` in one predictions.jsonl, by request id (repeat 0)."""
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding='utf-8').splitlines():
        row = json.loads(line)
        if (policy == '*' or row['policy'] == policy) and row.get('repeat', 0) == 0:
            out[row['id']] = row
    return out


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]],
            resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The paired figures of two runs (see the module's docstring)."""
    both = [i for i in before if i in after]
    scoped = [i for i in both if before[i]['level'] != 'out_of_scope']
    outside = [i for i in both if before[i]['level'] == 'out_of_scope']
    diffs = [after[i]['composite'] - before[i]['composite'] for i in scoped]
    n = len(diffs)
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n
                   for _ in range(resamples)) if n else [0.0]
    changed = [i for i in both if sorted(before[i]['predicted']) != sorted(after[i]['predicted'])]
    return {
        'in_scope': n,
        'delta': sum(diffs) / n if n else 0.0,
        'ci95': (means[int(0.025 * len(means))], means[min(len(means) - 1,
                                                            int(0.975 * len(means)))]),
        'changed': len(changed),
        'better': sum(after[i]['composite'] > before[i]['composite'] for i in changed),
        'worse': sum(after[i]['composite'] < before[i]['composite'] for i in changed),
        'in_scope_empty': (sum(not before[i]['predicted'] for i in scoped),
                           sum(not after[i]['predicted'] for i in scoped)),
        'out_of_scope_empty': (sum(not before[i]['predicted'] for i in outside),
                               sum(not after[i]['predicted'] for i in outside), len(outside)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('before', type=Path)
    ap.add_argument('after', type=Path)
    ap.add_argument('--policy', default='lcr')
    args = ap.parse_args(argv)
    result = compare(load(args.before, args.policy), load(args.after, args.policy))
    low, high = result['ci95']
    print(f"in scope {result['in_scope']}: delta {result['delta']:+.4f} [{low:+.4f}, {high:+.4f}]"
          f"; changed {result['changed']} (better {result['better']}, worse {result['worse']})"
          f"; in-scope empty {result['in_scope_empty'][0]} -> {result['in_scope_empty'][1]}"
          f"; out-of-scope empty {result['out_of_scope_empty'][0]} -> "
          f"{result['out_of_scope_empty'][1]} of {result['out_of_scope_empty'][2]}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
