"""Cross-fitted lcr: writer folds, fold patches and out-of-fold features (fake encoder)."""
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from tool_router.routing.embeddings import patch_meta, save_patch
from tool_router.common.errors import ConfigError
from tool_router.evaluation.dataset import Example
from tool_router.evaluation.fitting.encoder import fold_meta, writer_folds
from tool_router.evaluation.fitting.lcr import CrossFit, cross_fit_extractors, fit_variant
from tool_router.routing.policies.lcr import VARIANTS, FeatureExtractor


def ex(i, writer=None, **extra):
    kw = {'writer': writer} if writer else {}
    return Example(id=f'r{i}', level='direct', request=f'request {i}', tools=('land',),
                   **kw, **extra)


WRITERS = ['w1'] * 9 + ['w2'] * 7 + ['w3'] * 5 + ['w4'] * 4 + [None] * 6


def test_writer_folds_keep_a_writer_together_and_balance_the_folds():
    examples = [ex(i, w) for i, w in enumerate(WRITERS)]
    fold = writer_folds(examples, 3)
    assert fold == writer_folds(list(reversed(examples)), 3)  # order does not matter
    by_writer: dict[str, set[int]] = {}
    for e in examples:
        by_writer.setdefault((e.model_extra or {}).get('writer', '-'), set()).add(fold[e.id])
    assert all(len(ks) == 1 for ks in by_writer.values())  # every writer in one fold
    sizes = Counter(fold.values())
    assert sorted(sizes) == [0, 1, 2] and max(sizes.values()) - min(sizes.values()) <= 4
    with pytest.raises(ValueError, match='cannot fill'):
        writer_folds(examples, 6)  # five groups (four writers and the unnamed)


def test_fold_meta_names_the_held_out_requests():
    examples = [ex(i, w) for i, w in enumerate(WRITERS)]
    fold = writer_folds(examples, 3)
    metas = [fold_meta(examples, fold, k) for k in range(3)]
    assert [m['fold'] for m in metas] == ['0', '1', '2'] and {m['folds'] for m in metas} == {'3'}
    assert len({m['held_out'] for m in metas}) == 3
    more = [*examples, ex(99, 'w1')]  # w1, the largest writer, stays in fold 0
    assert writer_folds(more, 3)['r0'] == fold['r0'] == 0
    assert fold_meta(more, writer_folds(more, 3), 0)['held_out'] != metas[0]['held_out']
    assert fold_meta(more, writer_folds(more, 3), 1) == metas[1]


class Recorder:
    """Stands for a fold's feature extractor: records what it was asked to extract."""

    def __init__(self, names, k):
        self.names, self.k, self.seen = names, k, []

    def extract(self, text, variant):
        self.seen.append(text)
        return SimpleNamespace(fold=self.k, text=text)


def test_each_request_and_its_variants_take_the_features_of_their_own_fold():
    examples = [ex(i, w) for i, w in enumerate(WRITERS)]
    fold = writer_folds(examples, 3)
    augmented = [Example(id=f'{e.id}~typo', level='direct', request=f'{e.request} typo',
                         tools=('land',), augmented_from=e.id) for e in examples[::3]]
    names = ['land']
    recorders = [Recorder(names, k) for k in range(3)]
    feats, aug = CrossFit(fold, recorders).features(examples, augmented, VARIANTS['lcr'], names)
    assert [f.text for f in feats] == [e.request for e in examples]  # order kept
    assert [f.fold for f in feats] == [fold[e.id] for e in examples]
    assert [f.fold for f in aug] == [fold[str(a.model_extra['augmented_from'])]
                                     for a in augmented]
    assert sum(len(r.seen) for r in recorders) == len(examples) + len(augmented)  # once each
    with pytest.raises(ValueError, match='share the catalog'):
        CrossFit(fold, [Recorder(['other'], 0)] * 3).features(examples, [], None, names)


def test_cross_fitted_lcr_is_fitted_on_the_fold_features(fake_index):
    """A fold extractor that sees nothing of a tool must change the fitted weights."""
    examples = [Example(id=f'r{i}', level='direct' if tool else 'out_of_scope', request=text,
                        tools=(tool,) if tool else (), writer=w)
                for i, (text, tool, w) in enumerate([
                    ('tell me a joke', '', 'w1'), ('order a pizza', '', 'w2'),
                    ('write a poem', '', 'w3'),
                    ('land now', 'land', 'w1'), ('come back home', 'return_to_home', 'w1'),
                    ('battery level?', 'battery_status', 'w2'), ('land the drone', 'land', 'w2'),
                    ('return to launch', 'return_to_home', 'w3'),
                    ('how much charge is left', 'battery_status', 'w3'),
                    ('put it down here', 'land', 'w1'), ('go home', 'return_to_home', 'w2'),
                    ('is the pack low', 'battery_status', 'w3'), ('touch down', 'land', 'w3'),
                ] * 2)]
    plain_extractor = FeatureExtractor(fake_index, scope_phrases=['tell me a joke'])
    plain = fit_variant(examples, plain_extractor, 'lcr', 'test', lambda _: None, max_tools=8)
    fold = writer_folds(examples, 3)
    blind = [FeatureExtractor(fake_index, scope_phrases=['tell me a joke']) for _ in range(3)]
    for b in blind:  # a fold encoder that maps every text to one vector: no evidence at all
        vec = b.encode(['land now'])[0]
        b.encode = lambda texts, vec=vec: np.tile(vec, (len(texts), 1))  # type: ignore
    crossed = fit_variant(examples, plain_extractor, 'lcr', 'test', lambda _: None,
                          max_tools=8, cross_fit=CrossFit(fold, blind))
    assert not np.allclose(plain.weights, crossed.weights)


def test_fold_patches_are_checked_against_the_dataset(tmp_path):
    import torch

    examples = [ex(i, w) for i, w in enumerate(WRITERS)]
    fold = writer_folds(examples, 2)
    tensor = {'encoder.layer.5.output.dense.bias': torch.zeros(384, dtype=torch.float16)}
    good = []
    for k in range(2):
        path = tmp_path / f'fold{k}.safetensors'
        save_patch(tensor, path, fold_meta(examples, fold, k))
        assert patch_meta(path)['fold'] == str(k)
        good.append(path)
    with pytest.raises(ConfigError, match='repeated'):
        cross_fit_extractors(examples, [good[0], good[0]], None, False)
    other = tmp_path / 'other.safetensors'
    save_patch(tensor, other, fold_meta(examples[:-2], writer_folds(examples[:-2], 2), 1))
    with pytest.raises(ConfigError, match='not trained without fold 1'):
        cross_fit_extractors(examples, [good[0], other], None, False)
    three = tmp_path / 'three.safetensors'
    save_patch(tensor, three, fold_meta(examples, writer_folds(examples, 3), 1))
    with pytest.raises(ConfigError, match='not fold k of 2'):
        cross_fit_extractors(examples, [good[0], three], None, False)


def test_a_fold_patch_is_never_written_over_the_shipped_encoder(tmp_path, capsys):
    from tool_router.cli.main import main
    from tool_router.routing.embeddings import PATCH_FILE
    from tool_router.common.paths import config_path

    before = config_path(PATCH_FILE).read_bytes()
    dev = tmp_path / 'dev.jsonl'
    dev.write_text('{"id": "a", "level": "direct", "request": "land now", "tools": ["land"]}\n')
    assert main(['fit', 'encoder', '--dataset', str(dev), '--fold', '0', '--force']) == 2
    assert 'fold patch' in capsys.readouterr().err
    assert config_path(PATCH_FILE).read_bytes() == before


def test_the_out_of_scope_weight_moves_the_operating_point(fake_index):
    """fit lcr --oos-weight: a heavier weight never answers more out-of-scope requests."""
    from tool_router.evaluation.fitting.lcr import evaluate_cv
    from tool_router.evaluation.fitting.objective import objective

    inside = [('land now', 'land'), ('come back home', 'return_to_home'),
              ('battery level?', 'battery_status'), ('touch down here', 'land'),
              ('how much charge is left', 'battery_status'), ('go home now', 'return_to_home'),
              ('take a picture of the barn', 'rgb_camera'), ('snap a photo', 'rgb_camera')]
    outside = ['tell me a joke', 'order a pizza', 'write a poem', 'what is the capital of peru',
               'play some music', 'book a table for two', 'photo of my cat please',
               'land me a job', 'go home and rest', 'charge my phone']
    examples = [Example(id=f'i{i}', level='direct', request=t, tools=(tool,))
                for i, (t, tool) in enumerate(inside * 2)]
    examples += [Example(id=f'o{i}', level='out_of_scope', request=t, tools=())
                 for i, t in enumerate(outside * 2)]
    extractor = FeatureExtractor(fake_index, scope_phrases=['tell me a joke', 'order food'])
    feats = [extractor.extract(ex.request, VARIANTS['lcr']) for ex in examples]
    names = extractor.names
    light, heavy = (evaluate_cv(examples, feats, names, 'lcr', max_tools=8, oos_weight=w)
                    for w in (0.0, 10.0))
    assert heavy.oos_empty > light.oos_empty  # weight 0: nothing gained by abstaining
    assert heavy.in_empty >= light.in_empty and heavy.scope_threshold > light.scope_threshold
    two = examples[:1] + examples[-1:]  # one in scope answered empty, one out of scope answered
    base = objective(two, [set(), {'land'}])
    assert objective(two, [set(), {'land'}], oos_weight=1.0)[0] == pytest.approx(base[0])
    assert objective(two, [set(), set()], oos_weight=1.0)[0] - objective(
        two, [set(), set()])[0] == pytest.approx(0.75)  # rate 1: the weight's difference


def test_cv_by_writer_keeps_each_writer_out_of_the_model_that_scores_it(fake_index):
    """fit lcr's writer line: folds grouped by writer, scored at the random folds' thresholds."""
    from tool_router.evaluation.fitting.lcr import (
        FOLDS, Rows, _fit_rows, by_writer, cross_validate, evaluate_cv)
    from tool_router.routing.policies.lcr import logistic

    texts = [('land now', 'land'), ('come back home', 'return_to_home'),
             ('battery level?', 'battery_status'), ('tell me a joke', ''),
             ('touch down', 'land'), ('order a pizza', '')]
    examples = [Example(id=f'r{i}', level='direct' if tool else 'out_of_scope',
                        request=f'{text} {i}', tools=(tool,) if tool else (), writer=f'w{i % 6}')
                for i, (text, tool) in enumerate(texts * 5)]
    extractor = FeatureExtractor(fake_index, scope_phrases=['tell me a joke'])
    feats = [extractor.extract(e.request, VARIANTS['lcr']) for e in examples]
    names = extractor.names
    group = writer_folds(examples, FOLDS)
    fold = np.array([group[e.id] for e in examples])
    rows = Rows.of(examples, feats, names)
    oof, _ = cross_validate(rows, scope=False, fold=fold)
    F = rows.X.shape[-1]
    for k in range(FOLDS):  # fold k's requests are scored by a model fitted without them
        mean, scale, w, _ = _fit_rows(rows.take(fold != k), False)
        expected = logistic(rows.X[fold == k].reshape(-1, F), mean, scale, w)
        assert np.allclose(oof[fold == k].reshape(-1), expected)
    cv = evaluate_cv(examples, feats, names, 'lcr', max_tools=8)
    line = by_writer(examples, feats, names, 'lcr', [], [], cv, max_tools=8)
    assert 'CV folds by writer' in line and 'macro composite' in line
    one_writer = [e.model_copy(update={'writer': 'w0'}) for e in examples]
    assert 'no CV by writer' in by_writer(one_writer, feats, names, 'lcr', [], [], cv,
                                          max_tools=8)
