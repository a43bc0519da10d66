"""The state-question benchmark: does a question about a state select an actuator?

    python benchmarks/questions.py                                   # the dev question file
    python benchmarks/questions.py --dataset benchmarks/data/questions/test_questions.jsonl \
        --out benchmarks/results/questions/test.json
    python benchmarks/questions.py --dataset benchmarks/data/v2/dev.jsonl --changed 40
    python benchmarks/questions.py --from-eval OUT/test/predictions.jsonl \
        --dataset benchmarks/data/v2/test.jsonl --writers w33,w34      # score an eval run

Routes every request of the file with the shipped router (the configured default policy,
``lcr``, on the shipped MiniLM; in-memory index) twice: with ``state_questions`` off (the
policy's answer as it was: "before") and on (routing/questions.py: "after"); the encoder's
cache serves the second pass. For files with ``kind`` (``state_question`` / ``polite_order``,
benchmarks/data/questions/) it counts the state questions whose answer holds an actuator (the
target is none) and the polite orders whose answer holds every actuator of their truth set (the
target is all). For every file: the macro composite (ANNOTATION.md's metric, per level then
macro-averaged over the in-scope levels) before and after, the requests the rule changed, and
with ``--changed N`` the first N of them printed. ``--from-eval`` routes nothing: it scores a
``tool-router eval`` run's predictions the same way (files without ``kind``: in-scope requests
of style ``question`` with no actuator in their truth stand for the state questions, style
``polite`` with one for the polite orders), optionally for some writers only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding='utf-8').splitlines()
            if line.strip()]


def _macro(rows: list[dict[str, Any]], answers: list[list[str]]) -> float:
    from tool_router.evaluation.metrics import composite

    per: dict[str, list[float]] = {}
    for r, a in zip(rows, answers):
        if r.get('level', 'direct') != 'out_of_scope':
            per.setdefault(r.get('level', 'direct'), []).append(composite(r['tools'], a))
    means = [sum(v) / len(v) for v in per.values() if v]
    return round(sum(means) / len(means), 4) if means else 0.0


def run(dataset: Path, policy: str = '') -> dict[str, Any]:
    """Route every request before and after; the summary, with per-request rows."""
    from tool_router.common.catalog import Kind
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    rows = _rows(dataset)
    overrides: dict[str, Any] = {'chroma_ephemeral': True,
                                 'encoder': {'cache_size': max(1000, 2 * len(rows))}}
    config = load_router_config(overrides={**overrides, 'state_questions': False})
    after_config = load_router_config(overrides=overrides)
    answers: dict[str, list[list[str]]] = {'before': [], 'after': []}
    drops: list[list[dict[str, str]]] = []
    with Router(config) as router:
        actuators = {t.name for t in router.catalog if t.kind is Kind.ACTUATOR}
        for r in rows:
            answers['before'].append(router.route(r['request'], policy).tools)
        router.reconfigure(after_config)
        for r in rows:
            result = router.route(r['request'], policy)
            answers['after'].append(result.tools)
            drops.append([d.model_dump() for d in result.questions])
        used = result.policy if rows else policy
    summary: dict[str, Any] = {'dataset': str(dataset), 'policy': used, 'n': len(rows)}
    for when in ('before', 'after'):
        got = answers[when]
        part: dict[str, Any] = {'macro_composite': _macro(rows, got)}
        oos = [not a for r, a in zip(rows, got) if r.get('level') == 'out_of_scope']
        if oos:
            part['out_of_scope_empty'] = f'{sum(oos)}/{len(oos)}'
        if any('kind' in r for r in rows):
            state = [(r, a) for r, a in zip(rows, got) if r.get('kind') == 'state_question']
            acting = [(r, a) for r, a in state if set(a) & actuators]
            polite = [(r, a) for r, a in zip(rows, got) if r.get('kind') == 'polite_order']
            served = [(r, a) for r, a in polite
                      if set(r['tools']) & actuators <= set(a)]
            part.update({
                'state_questions': len(state),
                'state_questions_selecting_an_actuator': len(acting),
                'state_questions_exact': sum(set(a) == set(r['tools']) for r, a in state),
                'actuators_selected_on_state_questions': dict(Counter(
                    t for _, a in acting for t in a if t in actuators).most_common()),
                'polite_orders': len(polite),
                'polite_orders_acting': len(served),
                'polite_orders_exact': sum(set(a) == set(r['tools']) for r, a in polite),
                'state_question_misses': [
                    {'id': r.get('id', ''), 'request': r['request'], 'truth': r['tools'],
                     'answer': a} for r, a in acting],
                'polite_order_misses': [
                    {'id': r.get('id', ''), 'request': r['request'], 'truth': r['tools'],
                     'answer': a} for r, a in polite if (r, a) not in served],
            })
        summary[when] = part
    from tool_router.evaluation.metrics import composite

    changed = []
    for r, b, a, d in zip(rows, answers['before'], answers['after'], drops):
        if b != a:
            changed.append({'id': r.get('id', ''), 'request': r['request'], 'truth': r['tools'],
                            'before': b, 'after': a,
                            'delta': round(composite(r['tools'], a)
                                           - composite(r['tools'], b), 4),
                            'drops': d})
    summary['changed'] = len(changed)
    summary['changed_better'] = sum(c['delta'] > 0 for c in changed)
    summary['changed_worse'] = sum(c['delta'] < 0 for c in changed)
    summary['cases'] = changed
    return summary


def from_eval(predictions: Path, dataset: Path, writers: set[str] | None = None
              ) -> dict[str, Any]:
    """The question counts and the macro composite of a ``tool-router eval`` run's predictions.

    ``writers``: only the requests of these writers (the new-writer rows of v2 test: w33, w34).
    """
    import yaml

    catalog = yaml.safe_load((ROOT / 'config/catalog.yaml').read_text(encoding='utf-8'))
    actuators = {t['name'] for t in catalog['tools'] if t['kind'] == 'actuator'}
    rows = {r['id']: r for r in _rows(dataset)}
    preds = [p for p in _rows(predictions) if p['id'] in rows
             and (writers is None or rows[p['id']].get('writer') in writers)]
    picked = [rows[p['id']] for p in preds]
    got = [list(p['predicted']) for p in preds]
    out: dict[str, Any] = {'predictions': str(predictions), 'n': len(preds),
                           'macro_composite': _macro(picked, got)}
    oos = [not a for r, a in zip(picked, got) if r.get('level') == 'out_of_scope']
    if oos:
        out['out_of_scope_empty'] = f'{sum(oos)}/{len(oos)}'
    state = [(r, a) for r, a in zip(picked, got) if r.get('kind') == 'state_question']
    if not state and not any('kind' in r for r in picked):
        # files without kinds (the probes, v2): style 'question' with no actuator in the truth
        state = [(r, a) for r, a in zip(picked, got) if r.get('style') == 'question'
                 and r.get('level') != 'out_of_scope' and not set(r['tools']) & actuators]
        out['state_questions_are'] = "style 'question', in scope, no actuator in the truth"
    if state:
        polite = [(r, a) for r, a in zip(picked, got) if r.get('kind') == 'polite_order' or (
            'kind' not in r and r.get('style') == 'polite' and set(r['tools']) & actuators)]
        out.update({
            'state_questions': len(state),
            'state_questions_selecting_an_actuator': sum(bool(set(a) & actuators)
                                                         for _, a in state),
            'actuators_selected_on_state_questions': dict(Counter(
                t for _, a in state for t in a if t in actuators).most_common()),
            'polite_orders': len(polite),
            'polite_orders_acting': sum(set(r['tools']) & actuators <= set(a)
                                        for r, a in polite),
        })
    return out


def report_text(summary: dict[str, Any], show: int = 0) -> str:
    """The summary as text (the per-request lists left out)."""
    lines = [f'{summary["dataset"]}  policy {summary["policy"]}  n={summary["n"]}']
    for when in ('before', 'after'):
        part = {k: v for k, v in summary[when].items() if not k.endswith('misses')}
        lines.append(f'{when}: ' + json.dumps(part))
    lines.append(f'changed {summary["changed"]} (better {summary["changed_better"]}, '
                 f'worse {summary["changed_worse"]})')
    for c in summary['cases'][:show]:
        lines.append(f'  {c["delta"]:+.3f} {c["request"]!r} truth={c["truth"]} '
                     f'before={c["before"]} after={c["after"]}')
    return '\n'.join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dataset',
                    default=str(ROOT / 'benchmarks/data/questions/dev_questions.jsonl'))
    ap.add_argument('--policy', default='', help="policy to route with ('' = the configured)")
    ap.add_argument('--out', default='', help='write the summary and every case as JSON here')
    ap.add_argument('--changed', type=int, default=0, help='print the first N changed requests')
    ap.add_argument('--from-eval', default='',
                    help="score a `tool-router eval` run's predictions.jsonl against --dataset "
                    "instead of routing")
    ap.add_argument('--writers', default='', help='with --from-eval: only these writers (a,b)')
    args = ap.parse_args()
    if args.from_eval:
        scored = from_eval(Path(args.from_eval), Path(args.dataset),
                           set(args.writers.split(',')) if args.writers else None)
        print(json.dumps(scored, indent=1))
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(scored, indent=1) + '\n', encoding='utf-8')
        return 0
    summary = run(Path(args.dataset), args.policy)
    print(report_text(summary, args.changed))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(summary, indent=1, ensure_ascii=False) + '\n',
                                  encoding='utf-8')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
