"""Regenerate the data-summary block of docs/EVALUATION.md from the v2 batch files.

Counts every request of benchmarks/data/v2/new_b*.jsonl per writer and per style (by level, with
how many of them landed in v2/test.jsonl), and the tool coverage line. Run it after the split:

    python benchmarks/data_summary.py           # rewrite the block in place
    python benchmarks/data_summary.py --check   # exit 1 when the block is out of date
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tool_router.evaluation.dataset import ALL_LEVELS as LEVELS  # noqa: E402

DOC = ROOT / 'docs' / 'EVALUATION.md'
MARK = '<!-- data-summary: generated from benchmarks/data/v2/new_b*.jsonl -->'
LAST = 'Tool coverage (new requests'


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _table(rows: list[dict[str, Any]], test: set[Any], key: str, order: list[str]) -> list[str]:
    def line(name: str, group: list[dict[str, Any]]) -> str:
        counts = [str(sum(r['level'] == lvl for r in group)) for lvl in LEVELS]
        held = sum(r['id'] in test for r in group)
        return f'| {name} | ' + ' | '.join(counts) + f' | {len(group)} | {held} |'
    out = [f'| {key} | ' + ' | '.join(LEVELS) + ' | all | of which test |',
           '|---|' + '---:|' * (len(LEVELS) + 2)]
    out += [line(k, [r for r in rows if r[key] == k]) for k in order]
    out.append(line('**all**', rows))
    return out


def block(root: Path = ROOT) -> str:
    data = root / 'benchmarks' / 'data' / 'v2'
    rows = [r for f in sorted(data.glob('new_b*.jsonl')) for r in _read(f)]
    test = {r['id'] for r in _read(data / 'test.jsonl')}
    # w1 ... w34 by number, then the named writers (pubw1, pubw2) by name
    writers = sorted({str(r['writer']) for r in rows},
                     key=lambda w: (0, int(w[1:]), w) if w[1:].isdigit() else (1, 0, w))
    styles = collections.Counter(str(r['style']) for r in rows)
    tools = collections.Counter(str(t) for r in rows for t in r['tools'])
    coverage = ', '.join(f'{t} {n}' for t, n in sorted(tools.items(), key=lambda x: (-x[1], x[0])))
    lines = [MARK, *_table(rows, test, 'writer', writers), '',
             *_table(rows, test, 'style', sorted(styles, key=lambda s: (-styles[s], s))), '',
             f'{LAST}; every one of the {len(tools)} tools appears): {coverage}.']
    return '\n'.join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or '').split('\n')[0])
    parser.add_argument('--check', action='store_true',
                        help='only report whether the block is current')
    args = parser.parse_args()
    doc = DOC.read_text()
    start = doc.index(MARK)
    end = doc.index('\n', doc.index(LAST, start))
    new = doc[:start] + block() + doc[end:]
    if args.check:
        print('data-summary is current' if new == doc else 'data-summary is out of date')
        return 0 if new == doc else 1
    DOC.write_text(new)
    print('data-summary written' if new != doc else 'data-summary already current')
    return 0


if __name__ == '__main__':
    sys.exit(main())
