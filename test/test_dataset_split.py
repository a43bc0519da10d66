"""The v2 split: stratified by level and style, earlier assignments never move."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tool_router.cli.main import main
from tool_router.evaluation.dataset import Example, load_jsonl, stratified_split

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / 'benchmarks' / 'data'


def _examples(n: int, prefix: str = 'x') -> list[Example]:
    styles = ['terse', 'casual', 'typo', 'operator', 'question']
    return [
        Example(
            id=f'{prefix}{i}',
            level='direct' if i % 3 else 'out_of_scope',
            request=f'{prefix} request {i}',
            tools=('land',) if i % 3 else (),
            style=styles[i % len(styles)],
        )
        for i in range(n)
    ]


def test_every_level_and_style_gets_its_share():
    examples = _examples(300)
    dev, test = stratified_split(examples, 0.4, seed=1)
    assert len(test) == 120 and len(dev) == 180
    assert {e.id for e in dev}.isdisjoint({e.id for e in test})
    for key, n in Counter((e.level, e.style) for e in examples).items():
        got = sum(1 for e in test if (e.level, e.style) == key)
        assert abs(got - 0.4 * n) <= 1, key
    assert [e.id for e in test] == sorted((e.id for e in test), key=lambda s: int(s[1:]))


def test_kept_ids_stay_and_the_rest_is_deterministic():
    examples = _examples(50)
    dev, test = stratified_split(
        examples, 0.4, keep_test=frozenset({'x1'}), keep_dev=frozenset({'x2'})
    )
    assert 'x1' in {e.id for e in test} and 'x2' in {e.id for e in dev}
    again = stratified_split(
        examples, 0.4, keep_test=frozenset({'x1'}), keep_dev=frozenset({'x2'})
    )
    assert (dev, test) == again
    with pytest.raises(ValueError, match='both'):
        stratified_split(examples, keep_test=frozenset({'x3'}), keep_dev=frozenset({'x3'}))


def _write(path: Path, examples: list[Example]) -> Path:
    path.write_text(''.join(json.dumps(e.model_dump(mode='json')) + '\n' for e in examples))
    return path


def _ids(path: Path) -> set[str]:
    return {json.loads(line)['id'] for line in path.read_text().splitlines()}


def test_a_new_batch_never_moves_an_assigned_line(tmp_path, capsys):
    first = _write(tmp_path / 'b1.jsonl', _examples(40, 'a'))
    out = tmp_path / 'split'
    args = ['dataset', 'split', '--stratify', 'level,style', '--out', str(out)]
    keep = ['--keep-test', str(out / 'test.jsonl'), '--keep-dev', str(out / 'dev.jsonl')]
    assert main([*args, str(first)]) == 0
    test1, dev1 = _ids(out / 'test.jsonl'), _ids(out / 'dev.jsonl')
    assert len(test1) == 16
    second = _write(tmp_path / 'b2.jsonl', _examples(30, 'b'))
    assert main([*args, *keep, str(first), str(second)]) == 0
    test2, dev2 = _ids(out / 'test.jsonl'), _ids(out / 'dev.jsonl')
    assert test1 <= test2 and dev1 <= dev2
    assert len(test2) == 16 + 12
    assert _ids(out / 'requests.jsonl') == test2 | dev2


def test_a_repeated_text_across_batches_is_refused(tmp_path):
    first = _write(tmp_path / 'b1.jsonl', _examples(5, 'a'))
    copy = [e.model_copy(update={'id': 'z'}) for e in _examples(1, 'a')]
    same = _write(tmp_path / 'b2.jsonl', copy)
    args = ['dataset', 'split', '--stratify', 'level,style', '--out', str(tmp_path / 'o')]
    assert main([*args, str(first), str(same)]) == 2
    assert not (tmp_path / 'o').exists()


def test_shipped_v2_split_keeps_the_old_test_split_held_out(catalog):
    v2 = DATA / 'v2'
    dev = {e.id: e for e in load_jsonl(v2 / 'dev.jsonl', catalog)}
    test = {e.id: e for e in load_jsonl(v2 / 'test.jsonl', catalog)}
    every = {e.id: e for e in load_jsonl(v2 / 'requests.jsonl', catalog)}
    assert dev.keys().isdisjoint(test.keys())
    assert every.keys() == dev.keys() | test.keys()
    assert {e.id for e in load_jsonl(DATA / 'test.jsonl')} <= test.keys()
    assert {e.id for e in load_jsonl(DATA / 'dev.jsonl')} <= dev.keys()
    texts = [' '.join(e.request.lower().split()) for e in every.values()]
    assert len(texts) == len(set(texts))
    new = [e for e in every.values() if (e.model_extra or {}).get('writer')]
    assert {e.model_extra['writer'] for e in new} >= {'w3', 'w4', 'w5'}


# Landed lines whose stratum was corrected afterwards (id -> (field, value when it was split)).
# Their assignment is kept by the v2 keeps of the documented command; a rebuild from scratch
# reproduces the shipped split from the values they were split with (docs/EVALUATION.md).
CORRECTED = {
    'n18_234': ('style', 'shouted'),  # injection-only text: style injection (eighth pass)
}


# The writers split by writer (docs/EVALUATION.md): test measures wording no dev writer used.
DEV_WRITERS = 'w30,w31,w32,pubw1,pubw2,pubw3,pubw4,pubw5,pubw6,pubw7,pubw8,pubw9'
TEST_WRITERS = 'w33,w34'


def test_writers_split_by_writer_go_wholly_to_their_side(tmp_path, capsys):
    rows = [{'id': f'{w}_{i}', 'level': 'direct', 'request': f'land number {w} {i}',
             'tools': ['land'], 'style': 'terse', 'writer': w} for w in ('wa', 'wb', 'wc')
            for i in range(10)]
    path = tmp_path / 'batch.jsonl'
    path.write_text(''.join(json.dumps(r) + '\n' for r in rows))
    out = tmp_path / 'o'
    assert main(['dataset', 'split', str(path), '--stratify', 'level,style', '--out', str(out),
                 '--dev-writers', 'wa', '--test-writers', 'wb']) == 0
    dev = [json.loads(line)['id'] for line in (out / 'dev.jsonl').open()]
    test = [json.loads(line)['id'] for line in (out / 'test.jsonl').open()]
    assert all(i.startswith('wa') for i in dev if not i.startswith('wc'))
    assert all(i.startswith(('wb', 'wc')) for i in test)
    assert sum(i.startswith('wb') for i in test) == 10  # all of the test writer's
    assert sum(i.startswith('wc') for i in test) == 4   # an unlisted writer: 40 %
    assert main(['dataset', 'split', str(path), '--out', str(out), '--dev-writers', 'wa',
                 '--test-writers', 'wa']) == 2
    assert 'both sides' in capsys.readouterr().err


def test_the_shipped_writer_split_keeps_each_new_writer_on_one_side(catalog):
    sides = {}
    for name in ('dev', 'test'):
        for r in map(json.loads, (DATA / 'v2' / f'{name}.jsonl').open()):
            sides.setdefault(r.get('writer', ''), set()).add(name)
    assert all(sides[w] == {'dev'} for w in DEV_WRITERS.split(','))
    assert all(sides[w] == {'test'} for w in TEST_WRITERS.split(','))


def test_the_documented_command_rebuilds_the_shipped_v2_split(tmp_path):
    out = tmp_path / 'v2'
    batches = []
    for path in sorted((DATA / 'v2').glob('new_b*.jsonl')):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if any(r['id'] in CORRECTED for r in rows):
            for r in rows:
                if r['id'] in CORRECTED:
                    key, value = CORRECTED[r['id']]
                    r[key] = value
            path = tmp_path / path.name
            path.write_text(''.join(json.dumps(r) + '\n' for r in rows))
        batches.append(str(path))
    args = ['dataset', 'split', str(DATA / 'requests.jsonl'), *batches, '--out', str(out)]
    args += ['--stratify', 'level,style', '--test-fraction', '0.4', '--seed', '20261130']
    args += ['--keep-test', str(DATA / 'test.jsonl'), '--keep-dev', str(DATA / 'dev.jsonl')]
    args += ['--dev-writers', DEV_WRITERS, '--test-writers', TEST_WRITERS]
    assert main(args) == 0
    for name in ('dev.jsonl', 'test.jsonl', 'requests.jsonl'):
        rebuilt = {r['id']: r for r in map(json.loads, (out / name).open())}
        shipped = {r['id']: r for r in map(json.loads, (DATA / 'v2' / name).open())}
        assert list(rebuilt) == list(shipped), name  # the same lines, in the same order
        for i, row in shipped.items():
            if i in CORRECTED:
                key, _ = CORRECTED[i]
                row = {**row, key: rebuilt[i][key]}
            assert rebuilt[i] == row, (name, i)
    assert CORRECTED.keys() <= set(shipped)


@pytest.mark.parametrize('probe_name', ['test_public_style.jsonl', 'test_outside_style.jsonl'])
def test_the_probes_are_new_wording_and_reporting_splits(catalog, probe_name):
    """The probe rows (docs/EVALUATION.md): valid, unseen texts, refused by the fitting guard."""
    from tool_router.evaluation.fitting.guard import (
        normalise_request as key,
        refuse_reporting_data,
        reporting_split_files,
    )
    from tool_router.common.errors import DatasetError
    from tool_router.routing.policies.lcr import load_scope_phrases

    probe_file = DATA / 'probe' / probe_name
    probe = load_jsonl(probe_file, catalog)  # annotation checks: levels, tools, duplicates

    seen = {key(e.request) for e in load_jsonl(DATA / 'v2' / 'requests.jsonl', catalog)}
    seen |= {key(t) for tool in catalog for t in (*tool.examples, *tool.conditions)}
    seen |= {key(t) for t in load_scope_phrases()}
    assert not [e.request for e in probe if key(e.request) in seen]
    assert sum(e.level == 'out_of_scope' for e in probe) >= 10
    assert probe_file in reporting_split_files(DATA)
    with pytest.raises(DatasetError, match='test split'):
        refuse_reporting_data(probe[:1], 'probe', reporting_split_files(DATA))


def test_the_shipped_dev_split_passes_the_fitting_guard(catalog):
    """`scripts/fit_model.sh` refuses a dev that shares a request with any reporting split
    (two dev requests of writer w32 were a condition test's phrasings, 2026-12-03)."""
    from tool_router.evaluation.fitting.guard import refuse_reporting_data, reporting_split_files

    dev = load_jsonl(DATA / 'v2' / 'dev.jsonl', catalog)
    assert refuse_reporting_data(dev, 'dev', reporting_split_files(DATA))  # files were checked
