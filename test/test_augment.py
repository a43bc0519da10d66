"""Training-only noise: same labels, deterministic, never on the test split."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tool_router.cli.main import main
from tool_router.evaluation.augment import NOISES, augment, numbered, repeat
from tool_router.evaluation.dataset import Example

ROOT = Path(__file__).resolve().parent.parent

EXAMPLES = [
    Example(id='d1', level='direct', request='Land the drone now.', tools=('land',), style='x'),
    Example(
        id='d2',
        level='compound',
        request='Take off to 20 m, fly to the barn and then take a thermal picture of the roof.',
        tools=('goto_waypoint', 'takeoff', 'thermal_camera'),
    ),
    Example(id='d3', level='out_of_scope', request='Order a pizza for the crew.', tools=()),
]


def test_variants_keep_labels_and_extra_keys_and_differ_from_the_original():
    variants = augment(EXAMPLES, per_example=3, seed=7)
    assert len(variants) == 9
    by_id = {ex.id: ex for ex in EXAMPLES}
    for v in variants:
        src = by_id[v.model_extra['augmented_from']]
        assert v.id == f'{src.id}~{v.model_extra["noise"]}'
        assert (v.tools, v.level) == (src.tools, src.level)
        assert v.request.lower().split() != src.request.lower().split()
    assert {v.model_extra.get('style') for v in variants if v.id.startswith('d1~')} == {'x'}
    assert len({' '.join(v.request.lower().split()) for v in variants}) == len(variants)


def test_a_requests_variants_depend_only_on_the_seed_and_its_id():
    alone = augment(EXAMPLES[1:2], per_example=2, seed=3)
    together = [v for v in augment(EXAMPLES, per_example=2, seed=3) if v.id.startswith('d2~')]
    assert alone == together
    assert augment(EXAMPLES, seed=3) != augment(EXAMPLES, seed=4)


def test_every_noise_kind_rewrites_a_plain_request():
    text = 'Take off to 20 m, fly to the barn and then take a picture please.'
    for name, noise in NOISES.items():
        out = noise(text, random.Random(1))
        assert out and out != text, name
        assert '20' in out, name  # numbers survive every kind


def test_numbered_needs_several_steps_and_repeat_doubles_short_commands():
    assert numbered('land', random.Random(0)) is None
    out = numbered('Take off, fly to the barn and then land.', random.Random(0))
    assert out is not None and '1' in out and '3' in out and 'barn' in out
    assert repeat('abort', random.Random(0)) in ('abort abort', 'abort abort abort')
    with pytest.raises(ValueError, match='unknown noise'):
        augment(EXAMPLES, kinds=['telepathy'])


def test_the_command_refuses_test_split_requests(tmp_path, capsys):
    test_line = (ROOT / 'benchmarks' / 'data' / 'v2' / 'test.jsonl').read_text().splitlines()[0]
    mixed = tmp_path / 'mixed.jsonl'
    mixed.write_text(test_line + '\n')
    assert main(['dataset', 'augment', str(mixed), '--out', str(tmp_path / 'a.jsonl')]) == 2
    assert 'test split' in capsys.readouterr().err
    assert not (tmp_path / 'a.jsonl').exists()
    dev = tmp_path / 'dev.jsonl'
    dev.write_text(json.dumps(EXAMPLES[0].model_dump(mode='json')) + '\n')
    assert main(['dataset', 'augment', str(dev), '--out', str(tmp_path / 'a.jsonl')]) == 0
    out = [json.loads(line) for line in (tmp_path / 'a.jsonl').read_text().splitlines()]
    assert len(out) == 2 and all(r['tools'] == ['land'] for r in out)
