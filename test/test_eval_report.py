"""Routing the smoke slice in-process, bags round trip, report files, dataset errors, CLI smoke."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tool_router.cli.main import main
from tool_router.evaluation.bag import read_bag, write_bag, write_requests_bag
from tool_router.evaluation.dataset import LEVELS, load_jsonl
from tool_router.evaluation.report import RunInfo, build_report, write_report
from tool_router.evaluation.runner import InProcessBackend, load_dataset, run
from tool_router.routing.config import load_router_config

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / 'benchmarks' / 'smoke.jsonl'
POLICIES = ['cdbv1', 'cdbv2', 'cdbv3']


@pytest.fixture(scope='module')
def router(fake_router):
    """The hashing encoder's router: reports and bags are under test here, not MiniLM."""
    return fake_router


@pytest.fixture(scope='module')
def smoke(catalog):
    return load_jsonl(SMOKE, catalog)


@pytest.fixture(scope='module')
def smoke_records(router, smoke):
    return run(smoke, POLICIES, InProcessBackend(router), progress=False)


def _metrics(records):
    return [(r.id, r.policy, r.predicted, r.composite) for r in records]


def test_smoke_slice_composition(smoke):
    levels = [ex.level for ex in smoke]
    assert {lv: levels.count(lv) for lv in set(levels)} == \
        {'direct': 10, 'consequential': 10, 'compound': 10, 'out_of_scope': 6}
    dev = {json.loads(line)['id'] for line in (ROOT / 'benchmarks/data/dev.jsonl').open()}
    assert {ex.id for ex in smoke} <= dev


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_bag_round_trip_gives_same_metrics(tmp_path, catalog, router, smoke, smoke_records,
                                           storage):
    bag = write_requests_bag(smoke, tmp_path / 'bag', storage=storage, rate_hz=20)
    contents = read_bag(bag, catalog)
    assert not contents.selections
    # the Request message has no field for the optional 'style' key: the rest survives
    assert [r.example.model_dump() for r in contents.requests] == \
        [ex.model_dump(exclude={'style'}) for ex in smoke]
    steps = [b.timestamp - a.timestamp for a, b in zip(contents.requests, contents.requests[1:])]
    assert set(steps) == {50_000_000}
    dataset = load_dataset([bag], catalog)
    from_bag = run(dataset.examples, POLICIES, InProcessBackend(router), progress=False)
    assert _metrics(from_bag) == _metrics(smoke_records)


def test_report_shape_and_ranges(tmp_path, smoke, smoke_records):
    dataset = load_dataset([SMOKE], None).summary()
    report = build_report(smoke_records, dataset, RunInfo(mode='in_process'), defaults=['cdbv3'])
    out = write_report(report, smoke_records, tmp_path / 'r')
    data = json.loads((out / 'report.json').read_text())
    assert data['dataset']['n'] == 36 and data['dataset']['levels']['direct'] == 10
    assert data['dataset']['sources'] == [str(SMOKE)]
    assert list(data['policies']) == POLICIES
    assert [data['policies'][p]['default'] for p in POLICIES] == [False, False, True]
    for p in data['policies'].values():
        assert set(p['levels']) == set(LEVELS)
        for m in [*p['levels'].values(), p['macro']]:
            for key in ('em', 'completeness', 'precision', 'composite'):
                assert 0.0 <= m[key] <= 1.0
        assert p['macro']['composite'] == pytest.approx(
            sum(p['levels'][lv]['composite'] for lv in LEVELS) / 3)
        assert p['out_of_scope']['n'] == 6 and 0 <= p['out_of_scope']['empty_rate'] <= 1
        assert 0 <= p['in_scope_empty_rate'] <= 1
        lat = p['latency_ms']
        assert 0 < lat['p50'] <= lat['p90'] <= lat['p99']
        assert set(p['styles']) == {ex.style for ex in smoke}
    pairs = [(d['a'], d['b']) for d in data['paired']]
    assert pairs == [('cdbv1', 'cdbv2'), ('cdbv1', 'cdbv3'), ('cdbv2', 'cdbv3')]
    for d in data['paired']:
        assert d['n'] == 30 and d['ci95'][0] <= d['delta_composite'] <= d['ci95'][1]
    lines = (out / 'predictions.jsonl').read_text().splitlines()
    assert len(lines) == 36 * 3
    first = json.loads(lines[0])
    for key in ('id', 'level', 'request', 'truth', 'predicted', 'scores', 'fragments', 'em',
                'composite', 'missed', 'extra', 'latency_ms'):
        assert key in first
    md = (out / 'report.md').read_text()
    assert '| policy | direct | consequential | compound | macro |' in md
    assert 'cdbv3 (default)' in md and '95% CI' in md
    for name in ('composite_by_level', 'completeness_precision', 'latency', 'missed_extra'):
        png = out / f'{name}.png'
        assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and png.stat().st_size > 5000
        assert f']({name}.png)' in md


def _write(tmp_path, lines):
    path = tmp_path / 'bad.jsonl'
    path.write_text('\n'.join(json.dumps(x) for x in lines) + '\n')
    return path


GOOD = {'id': 'a', 'level': 'direct', 'request': 'land', 'tools': ['land']}


@pytest.mark.parametrize('bad, reason', [
    ({'id': 'b', 'level': 'direct', 'request': 'zap', 'tools': ['teleport']}, 'unknown tool'),
    ({'id': 'b', 'level': 'direct', 'request': 'x y', 'tools': ['land', 'takeoff']},
     'cannot have 2'),
    ({'id': 'b', 'level': 'direct', 'request': 'zap', 'tools': ['thermal_camra']},
     'unknown tool name(s): thermal_camra (did you mean thermal_camera?)'),
    ({'id': 'a', 'level': 'direct', 'request': 'hover', 'tools': ['hold_position']},
     'duplicate id'),
])
def test_malformed_dataset_exits_nonzero_naming_the_line(tmp_path, capsys, bad, reason):
    path = _write(tmp_path, [GOOD, bad])
    code = main(['eval', '--dataset', str(path), '--policies', 'cdbv1', '--out',
                 str(tmp_path / 'out')])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert f'{path}:2' in err and reason in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / 'out').exists()


def test_unknown_policy_fails_before_routing(tmp_path, capsys):
    path = _write(tmp_path, [GOOD])
    code = main(['eval', '--dataset', str(path), '--policies', 'cdbv1,cdbv9', '--out',
                 str(tmp_path / 'out')])
    assert code != 0 and "unknown policy 'cdbv9'" in capsys.readouterr().err
    assert not (tmp_path / 'out').exists()


def test_bad_bags_are_named(tmp_path, capsys, catalog):
    from tool_router.evaluation.bag import REQUEST_TYPE, BagEntry, typestore
    store = typestore()
    stamp = store.types['builtin_interfaces/msg/Time'](sec=1, nanosec=0)
    msg = store.types[REQUEST_TYPE](stamp=stamp, request_id='r1', text='land now', policy='',
                                    execute=False, level='', expected_tools=[], key_id='',
                                    timestamp=0.0, nonce='', signature='', client_id='',
                                    max_tools=0)
    bag = write_bag(tmp_path / 'unannotated',
                    [BagEntry('/tool_router/requests', REQUEST_TYPE, 1, msg)])
    code = main(['eval', '--dataset', str(bag), '--out', str(tmp_path / 'o')])
    err = capsys.readouterr().err
    assert code != 0 and '/tool_router/requests message 1' in err and 'no annotation' in err
    (tmp_path / 'notabag').mkdir()
    code = main(['eval', '--dataset', str(tmp_path / 'notabag'), '--out', str(tmp_path / 'o')])
    assert code != 0 and 'not a rosbag2' in capsys.readouterr().err


# Request and SelectedCapabilities before the requester signature fields were appended.
OLD_REQUEST = """builtin_interfaces/Time stamp
string request_id
string text
string policy
bool execute
string level
string[] expected_tools
"""
OLD_SELECTION = """builtin_interfaces/Time stamp
string request_id
string request_text
string[] tools
float32[] scores
string policy
bool fallback_used
int32[] clause_index
string[] conditions
string explanation_json
"""


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_bags_recorded_before_the_signature_fields_still_read(tmp_path, storage):
    import numpy as np
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    from tool_router.evaluation.bag import REQUEST_TYPE, SELECTION_TYPE
    old = get_typestore(Stores.ROS2_JAZZY)
    old.register(get_types_from_msg(OLD_REQUEST, REQUEST_TYPE))
    old.register(get_types_from_msg(OLD_SELECTION, SELECTION_TYPE))
    stamp = old.types['builtin_interfaces/msg/Time'](sec=1, nanosec=0)
    request = old.types[REQUEST_TYPE](stamp=stamp, request_id='a1', text='land the drone',
                                      policy='', execute=False, level='direct',
                                      expected_tools=['land'])
    selection = old.types[SELECTION_TYPE](
        stamp=stamp, request_id='a1', request_text='land the drone', tools=['land'],
        scores=np.ones(1, dtype=np.float32), policy='lcr', fallback_used=False,
        clause_index=np.zeros(1, dtype=np.int32), conditions=[''], explanation_json='')
    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
    out = tmp_path / 'old'
    with Writer(out, version=9, storage_plugin=plugin) as writer:
        for topic, msgtype, msg in (('/tool_router/requests', REQUEST_TYPE, request),
                                    ('/tool_router/decisions', SELECTION_TYPE, selection)):
            conn = writer.add_connection(topic, msgtype, typestore=old)
            writer.write(conn, 1000, bytes(old.serialize_cdr(msg, msgtype)))
    contents = read_bag(out)
    assert [list(r.example.tools) for r in contents.requests] == [['land']]
    assert [s.tools for s in contents.selections] == [['land']]


@pytest.mark.slow  # the real command loads MiniLM in a child process
def test_cli_smoke(tmp_path):
    """The CI smoke test: the real command on the smoke slice."""
    out = tmp_path / 'r'
    env = {**os.environ, 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sys.executable, '-m', 'tool_router.cli', 'eval', '--dataset', str(SMOKE),
         '--policies', 'cdbv1,cdbv2,default', '--out', str(out), '--set', 'chroma_ephemeral=true'],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((out / 'report.json').read_text())
    default = load_router_config().policy
    assert list(data['policies']) == ['cdbv1', 'cdbv2', default]
    assert data['policies'][default]['default'] is True
    for p in data['policies'].values():
        assert 0 <= p['macro']['composite'] <= 1
        assert all(0 <= m['composite'] <= 1 for m in p['levels'].values())
    assert (out / 'report.md').stat().st_size > 0
    assert len((out / 'predictions.jsonl').read_text().splitlines()) == 36 * 3


def _selection(store, rid, tools):
    from tool_router.evaluation.bag import SELECTION_TYPE
    choice = store.types['tool_router/msg/ToolChoice']
    return store.types[SELECTION_TYPE](
        stamp=store.types['builtin_interfaces/msg/Time'](sec=1, nanosec=0), request_id=rid,
        request_text='', choices=[choice(tool=t, score=1.0, clause_index=0, condition='',
                                         evidence=[]) for t in tools],
        policy='lcr', fallback_used=False, explanation_json='', requested_policy='',
        requested_max_tools=0, key_id='', timestamp=0.0,
        nonce='', signature='', router_signature='')


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_recorded_session_counts_what_it_cannot_score(tmp_path, capsys, smoke, storage):
    import sys

    import yaml
    from tool_router.evaluation.bag import (REQUEST_TOPIC, REQUEST_TYPE, SELECTION_TOPIC,
                                            SELECTION_TYPE, BagEntry, request_message, typestore)
    store = typestore()
    a, b, c = smoke[0], smoke[1], smoke[2]
    a_tools = list(a.tools)
    entries = [BagEntry(REQUEST_TOPIC, REQUEST_TYPE, 10, request_message(store, a, 10)),
               BagEntry(REQUEST_TOPIC, REQUEST_TYPE, 20, request_message(store, b, 20)),
               BagEntry(REQUEST_TOPIC, REQUEST_TYPE, 30, request_message(store, c, 30)),
               BagEntry(REQUEST_TOPIC, REQUEST_TYPE, 35, request_message(store, c, 35)),
               BagEntry(SELECTION_TOPIC, SELECTION_TYPE, 40, _selection(store, a.id, a_tools)),
               BagEntry(SELECTION_TOPIC, SELECTION_TYPE, 45, _selection(store, a.id, ['land'])),
               BagEntry(SELECTION_TOPIC, SELECTION_TYPE, 50, _selection(store, 'ghost', ['land'])),
               BagEntry(SELECTION_TOPIC, SELECTION_TYPE, 60, _selection(store, c.id, ['land']))]
    bag = write_bag(tmp_path / 'session', entries, storage)
    # every topic carries the type hash rosidl computes for the message (RIHS01)
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    hashes = {t['topic_metadata']['type']: t['topic_metadata']['type_description_hash']
              for t in meta['topics_with_message_count']}
    for msgtype in (REQUEST_TYPE, SELECTION_TYPE):
        assert hashes[msgtype].startswith('RIHS01_') and len(hashes[msgtype]) == 71
        name = msgtype.rsplit('/', 1)[1]
        generated = Path(sys.prefix) / 'share' / 'tool_router' / 'msg' / f'{name}.json'
        if generated.exists():  # the interfaces built by scripts/setup.sh
            ours = json.loads(generated.read_text())['type_hashes'][0]
            assert ours == {'type_name': msgtype, 'hash_string': hashes[msgtype]}
    out = tmp_path / 'report'
    assert main(['eval', '--dataset', str(bag), '--out', str(out), '--no-plots']) == 0
    err = capsys.readouterr().err
    warnings = json.loads((out / 'report.json').read_text())['run']['warnings']
    assert warnings == [
        "1 selection(s) without their request message in the bag, not scored: 'ghost'",
        f"1 extra selection(s) for an already answered request id, not scored (the first one "
        f"is): {a.id!r}",
        f"1 request message(s) repeat the request_id of an earlier one (each is scored with "
        f"that id's selection): {c.id!r}",
        f"1 request(s) without a selection, scored as empty answers (the node publishes "
        f"nothing for no tool): {b.id!r}",
    ]
    assert all(f'tool-router: warning: {w}' in err for w in warnings)
    assert 'Warnings:' in (out / 'report.md').read_text()
    rows = [json.loads(line) for line in (out / 'predictions.jsonl').read_text().splitlines()]
    assert [(r['id'], r['predicted']) for r in rows][:2] == [(a.id, sorted(a.tools)), (b.id, [])]
