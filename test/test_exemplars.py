"""lcr's exemplar memory: what becomes an exemplar, the features, the cache, no self-evidence."""
import json
from pathlib import Path

import numpy as np
import pytest

from tool_router.routing import exemplars as mem
from tool_router.common.errors import ConfigError
from tool_router.evaluation.dataset import Example
from tool_router.evaluation.fitting.encoder import writer_folds
from tool_router.evaluation.fitting.lcr import CrossFit, collect_exemplars, fold_memories
from tool_router.routing.exemplars import (
    TOOL_FEATURES,
    ExemplarBuilder,
    ExemplarMemory,
    Exemplars,
    exemplar_vectors,
    load_exemplars,
)
from tool_router.routing.policies.lcr import FEATURES, SCOPE_FEATURES, VARIANTS, FeatureExtractor

NAMES = ['takeoff', 'land', 'rgb_camera']
COL = {n: i for i, n in enumerate(NAMES)}


def unit(*xs):
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_builder_keeps_requests_units_and_out_of_scope():
    b = ExemplarBuilder()
    b.add('a', 'take off', ['takeoff'])
    b.add('b', 'tell me a joke', [])
    score = np.array([[0.9, 0.1, 0.2],   # "go up" -> takeoff
                      [0.1, 0.2, 0.25],  # too far from both gold tools: no unit
                      [0.2, 0.1, 0.8],   # a photo: not a gold tool of this request
                      [0.3, 0.7, 0.1]])  # "come down" -> land
    b.add('c', 'go up, hmm, snap, come down', ['land', 'takeoff'],
          ['go up', 'hmm', 'snap', 'come down'], score, [True, True, True, True], COL)
    b.add('d', 'take off', ['takeoff'])  # a repeated text is stored once
    ex = b.build()
    assert ex.texts == ('take off', 'tell me a joke', 'go up, hmm, snap, come down', 'go up',
                        'hmm', 'snap', 'come down')
    assert ex.requests == ((0, 'a', ('takeoff',)), (2, 'c', ('land', 'takeoff')),
                           (0, 'd', ('takeoff',)))
    assert ex.units == ((0, 'a', 'takeoff'), (3, 'c', 'takeoff'), (6, 'c', 'land'),
                        (0, 'd', 'takeoff'))
    assert ex.out_of_scope == ((1, 'b'),)
    # clauses whose closest tool is not one the request asked for: context, not requests
    assert ex.context == ((4, 'c'), (5, 'c'))
    assert Exemplars.from_json(ex.to_json()) == ex
    # a negated or steering clause is no unit
    b2 = ExemplarBuilder()
    b2.add('c', 'x', ['land', 'takeoff'], ['go up', 'come down'], score[[0, 3]],
           [False, True], COL)
    assert b2.build().units == ((1, 'c', 'land'),)  # texts: 'x', 'come down'
    assert b2.build().context == ()  # one counting clause is never context
    b3 = ExemplarBuilder()  # a one-tool request with a background clause
    b3.add('e', 'battery is low, go up', ['takeoff'], ['battery is low', 'go up'],
           np.array([[0.1, 0.2, 0.3], [0.9, 0.1, 0.1]]), [True, True], COL)
    assert b3.build().units == ((0, 'e', 'takeoff'),)
    assert b3.build().context == ((1, 'e'),)


def test_a_bad_exemplar_index_is_refused(tmp_path):
    raw = {'texts': ['a'], 'requests': [[1, 's', ['land']]], 'units': [], 'out_of_scope': []}
    with pytest.raises(ValueError, match='outside'):
        Exemplars.from_json(raw)
    bad = tmp_path / 'model.json'
    bad.write_text('{"variants": {}, "exemplars": {"texts": ["a"], "requests": [[3, "s", []]],'
                   ' "units": [], "out_of_scope": []}}')
    with pytest.raises(ConfigError, match='invalid exemplars'):
        load_exemplars(bad)
    old = tmp_path / 'old.json'
    old.write_text('{"variants": {}}')
    assert len(load_exemplars(old)) == 0  # a model file from before the memory: none


def memory(keep=None):
    ex = Exemplars(
        texts=('t0', 't1', 't2', 'o0', 'c0'),
        requests=((0, 'w1', ('takeoff',)), (1, 'w2', ('land', 'rgb_camera')),
                  (2, 'w2', ('unknown_tool',))),
        units=((0, 'w1', 'takeoff'), (4, 'w2', 'land'), (2, 'w2', 'unknown_tool')),
        out_of_scope=((3, 'w3'),),
        context=((2, 'w3'),),
    )
    vectors = np.stack([unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1), unit(1, 1, 1),
                        unit(0, 1, 1)])
    return ExemplarMemory(ex, vectors, NAMES, keep)


def one_clause(v):
    """A request of one counting clause (the clause is the request)."""
    return np.stack([v]), np.array([True]), np.zeros((1, len(NAMES)))


def test_features_of_the_nearest_exemplars():
    m = memory()
    q = unit(1, 0.5, 0)
    X, scope = m.features(q, *one_clause(unit(0, 1, 1)))
    f = {n: i for i, n in enumerate(TOOL_FEATURES)}
    s_take, s_land = float(unit(1, 0, 0) @ q), float(unit(0, 1, 0) @ q)
    assert X[:, f['nn_full']] == pytest.approx([s_take, s_land, s_land])
    assert X[:, f['nn_gap']] == pytest.approx([0.0, s_land - s_take, s_land - s_take])
    # the exemplar of a tool the catalog lacks (t2) is left out
    w = np.exp((np.array([s_take, s_land]) - s_take) / mem.VOTE_TEMPERATURE)
    assert X[:, f['nn_vote']] == pytest.approx([w[0] / w.sum(), w[1] / w.sum(), w[1] / w.sum()],
                                               rel=1e-5)
    assert X[:, f['nn_clause']] == pytest.approx([float(unit(1, 0, 0) @ unit(0, 1, 1)), 1.0,
                                                  -1.0])
    o = float(unit(1, 1, 1) @ q)
    assert scope == pytest.approx(o - (s_take + s_land) / 2, rel=1e-5)  # two in-scope exemplars
    none, _ = m.features(q, np.zeros((0, 3), np.float32), np.zeros(0, bool),
                         np.zeros((0, 3)))  # no counting clause
    assert (none[:, f['nn_clause']] == -1).all() and (none[:, f['nn_ctx_gap']] == 0).all()


def test_context_gap_looks_at_each_tool_s_strongest_counting_clause():
    m = memory()
    clauses = np.stack([unit(0, 1, 1), unit(0, 0, 1), unit(1, 0, 0)])
    counting = np.array([True, True, False])
    score = np.array([[0.2, 0.9, 0.3],      # land's strongest counting clause
                      [0.6, 0.1, 0.5],      # takeoff's and rgb_camera's
                      [0.99, 0.99, 0.99]])  # not counting: never a tool's clause
    X, _ = m.features(unit(1, 0, 0), clauses, counting, score)
    gap = X[:, TOOL_FEATURES.index('nn_ctx_gap')]
    # context exemplar (0, 0, 1); units: takeoff (1, 0, 0), land (0, 1, 1), rgb_camera none
    assert gap == pytest.approx([1.0 - 0.0, float(unit(0, 1, 1) @ unit(0, 0, 1)) - 1.0,
                                 1.0 - (-1.0)], abs=1e-6)
    assert X[:, TOOL_FEATURES.index('nn_clause')] == pytest.approx([0.0, 1.0, -1.0], abs=1e-6)


def test_keep_leaves_a_writer_out():
    m = memory(keep=lambda source: source != 'w2')
    X, scope = m.features(unit(0, 1, 0), *one_clause(unit(0, 1, 0)))
    assert m.size == 2
    assert X[COL['land']].tolist()[:2] == [-1.0, -1.0]  # w2's land exemplars are gone
    assert X[COL['takeoff'], 3] == pytest.approx(1.0)  # the only neighbour left votes
    assert len(m.without(lambda source: source == 'w3').context_vectors) == 0
    empty = ExemplarMemory(Exemplars.empty(), np.zeros((0, 3), np.float32), NAMES)
    X, scope = empty.features(unit(1, 0, 0), *one_clause(unit(1, 0, 0)))
    assert (X[:, :2] == -1).all() and scope == 0.0
    assert (X[:, 2:4] == 0).all()


class CountingEncoder:
    model_id = 'counting'
    device = 'cpu'
    backend = 'test'

    def __init__(self, weights_id=''):
        self.calls = 0
        if weights_id:
            self.weights_id = weights_id

    def encode(self, texts):
        self.calls += 1
        return np.stack([unit(1.0, len(t), 0.5) for t in texts])


def test_vectors_are_cached_per_weights_in_process_and_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv('TOOL_ROUTER_CACHE', str(tmp_path))
    monkeypatch.setattr(mem, '_MEMO', {})
    ex = Exemplars(('a', 'bb'), ((0, 's', ('land',)),), (), ((1, 't'),))
    enc = CountingEncoder('m@1234')
    v = exemplar_vectors(ex, enc)
    assert v.shape == (2, 3) and enc.calls == 1
    assert exemplar_vectors(ex, enc) is v and enc.calls == 1  # this process
    assert len(list((tmp_path / 'exemplars').glob('*.npy'))) == 1
    monkeypatch.setattr(mem, '_MEMO', {})  # a new process: read from disk
    again = CountingEncoder('m@1234')
    assert np.array_equal(exemplar_vectors(ex, again), v) and again.calls == 0
    other = CountingEncoder('m@5678')  # other weights: embedded again
    exemplar_vectors(ex, other)
    assert other.calls == 1
    fake = CountingEncoder()  # no weights id (a test encoder): nothing written to disk
    exemplar_vectors(ex, fake)
    assert fake.calls == 1 and len(list((tmp_path / 'exemplars').glob('*.npy'))) == 2


def test_an_unwritable_cache_costs_only_time(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / 'not-a-directory'
    blocker.write_text('')  # the cache root is a file: nothing can be written under it
    monkeypatch.setenv('TOOL_ROUTER_CACHE', str(blocker))
    monkeypatch.setattr(mem, '_MEMO', {})
    ex = Exemplars(('a', 'bb'), ((0, 's', ('land',)),), (), ((1, 't'),))
    enc = CountingEncoder('m@1234')
    with caplog.at_level('WARNING'):
        v = exemplar_vectors(ex, enc)
    assert v.shape == (2, 3) and enc.calls == 1
    assert 'cannot write exemplar cache' in caplog.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ['not-a-directory']


def test_a_cache_file_is_replaced_whole(tmp_path):
    from tool_router.common.paths import write_cache_file
    path = tmp_path / 'sub' / 'v.npy'
    write_cache_file(path, lambda tmp: np.save(tmp, np.arange(3)), 'test cache')
    assert np.load(path).tolist() == [0, 1, 2]

    def torn(tmp):
        tmp.write_bytes(b'half')
        raise OSError('disk full')
    write_cache_file(path, torn, 'test cache')  # a failed write leaves the old file and no tmp
    assert np.load(path).tolist() == [0, 1, 2]
    assert [p.name for p in path.parent.iterdir()] == ['v.npy']


def test_extractor_fills_the_memory_features(fake_index):
    ex = Exemplars(('land the drone now',), ((0, 's', ('land',)),), ((0, 's', 'land'),), ())
    x = FeatureExtractor(fake_index)
    vectors = fake_index.embed(list(ex.texts))
    x.memory = ExemplarMemory(ex, vectors, x.names)
    f = x.extract('land the drone now')
    nn = {n: FEATURES.index(n) for n in TOOL_FEATURES}
    land = x.names.index('land')
    assert f.X[land, nn['nn_full']] == pytest.approx(1.0, abs=1e-5)
    assert f.X[land, nn['nn_clause']] == pytest.approx(1.0, abs=1e-5)
    assert f.X[land, nn['nn_vote']] == pytest.approx(1.0)
    assert len(f.scope) == len(SCOPE_FEATURES)
    off = x.extract('land the drone now', VARIANTS['lcr_no_exemplars'])
    assert (off.X[:, nn['nn_full']] == -1).all() and off.scope[-1] == 0.0


def test_a_fit_never_takes_a_request_s_evidence_from_its_own_writer(fake_index):
    """The request and another one worded the same by its writer: neither is its own neighbour."""
    rows = [('a1', 'w1', 'land the drone now', ('land',)),
            ('a2', 'w1', 'land the drone now please', ('land',)),
            ('b1', 'w2', 'take off to ten metres', ('takeoff',)),
            ('c1', 'w3', 'start recording a video', ('record_video',)),
            ('d1', 'w4', 'what is the weather', ())]
    examples = [Example(id=i, level='direct' if t else 'out_of_scope', request=r, tools=t,
                        writer=w) for i, w, r, t in rows]
    x = FeatureExtractor(fake_index)
    x.memoize()
    fold = writer_folds(examples, 4)
    cf = CrossFit(fold, [x] * 4)
    ex = collect_exemplars(examples, x)
    assert len(ex.requests) == 4 and len(ex.out_of_scope) == 1
    cf.memories = fold_memories(ex, cf, log=lambda s: None)
    feats, _ = cf.features(examples, [], VARIANTS['lcr'], x.names)
    nn_full = FEATURES.index('nn_full')
    land = x.names.index('land')
    assert feats[0].X[land, nn_full] == -1.0  # w1's own land requests are not in its memory
    assert x.memory is None  # the extractor is left as it was
    full = ExemplarMemory(ex, fake_index.embed(list(ex.texts)), x.names)
    x.memory = full  # at run time the memory holds every writer
    assert x.extract(examples[0].request).X[land, nn_full] == pytest.approx(1.0, abs=1e-5)


def test_eval_warns_when_the_dataset_is_in_the_memory(tmp_path):
    from tool_router.cli.evaluation import _memory_warnings

    model = tmp_path / 'model.json'
    ex = Exemplars(('a', 'b'), ((0, 'd1', ('land',)),), ((0, 'd1', 'land'),), ((1, 'd2'),))
    model.write_text(json.dumps({'variants': {}, 'exemplars': ex.to_json()}))
    rows = [Example(id=i, level='direct', request='x', tools=('land',))
            for i in ('d1', 'd2', 't1')]
    got = _memory_warnings(rows, ['lcr', 'cdbv3'], str(model))
    assert len(got) == 1 and got[0].startswith('2 of the 3 requests are in lcr')
    assert _memory_warnings(rows[2:], ['lcr'], str(model)) == []
    assert _memory_warnings(rows, ['cdbv3'], str(model)) == []  # no lcr, no memory


def test_gate_rows_route_each_request_without_its_writer_s_exemplars(fake_router, tmp_path):
    from tool_router.evaluation.fitting import gate
    from tool_router.evaluation.metrics import composite
    from tool_router.routing.policies.hybrid import gate_signals

    lines = (Path(__file__).parent.parent / 'benchmarks/data/v2/dev.jsonl').read_text(
        encoding='utf-8').splitlines()
    rows, writers = [], {}
    for line in lines:  # two in-scope requests of each of four writers
        r = json.loads(line)
        if r['level'] != 'out_of_scope' and writers.get(r.get('writer'), 0) < 2 and (
                r.get('writer') in writers or len(writers) < 4):
            writers[r.get('writer')] = writers.get(r.get('writer'), 0) + 1
            rows.append(line)
    data = tmp_path / 'dev_part.jsonl'
    data.write_text('\n'.join(rows) + '\n', encoding='utf-8')
    local = fake_router.policy('lcr')
    memory = local.extractor.memory
    assert memory is not None and len(rows) == 8
    got = gate.gate_rows(fake_router, data, 'lcr')
    assert local.extractor.memory is memory  # restored
    examples = [Example(**json.loads(x)) for x in rows]
    fold = writer_folds(examples, gate.MEMORY_FOLDS)
    differs = 0
    for ex, (signals, loss) in zip(examples, got):
        local.extractor.memory = memory.without(lambda s, k=fold[ex.id]: fold.get(s) == k)
        try:
            alone = local.route(ex.request, 8).capped(8)
        finally:
            local.extractor.memory = memory
        assert (signals, loss) == (gate_signals(alone), 1.0 - composite(ex.tools, alone.tools))
        differs += gate_signals(local.route(ex.request, 8).capped(8)) != signals
    assert differs  # with its own writer's requests in the memory the answers are surer
