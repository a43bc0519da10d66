"""The embedding interface: the shipped model offline, device choice, clear errors."""
import numpy as np
import pytest
import torch

import threading

from tool_router.routing.embeddings import (
    OnnxSentenceModel,
    SentenceTransformerEncoder,
    length_groups,
    resolve_device,
    resolve_model,
)
from tool_router.common.errors import ConfigError


def test_default_model_resolves_to_the_shipped_weights():
    path = resolve_model('all-MiniLM-L6-v2')
    assert path.endswith('model') and resolve_model('') == path
    assert resolve_model('/some/local/model') == '/some/local/model'


def test_auto_device_follows_cuda_availability():
    assert resolve_device('auto') == ('cuda' if torch.cuda.is_available() else 'cpu')
    assert resolve_device('cpu') == 'cpu'


@pytest.mark.skipif(torch.cuda.is_available(), reason='checks the error without a GPU')
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ConfigError, match='CUDA is not available'):
        resolve_device('cuda')


@pytest.mark.slow  # loads MiniLM
def test_loading_the_model_prints_no_progress_bar(capfd):
    SentenceTransformerEncoder('all-MiniLM-L6-v2', 'cpu')
    err = capfd.readouterr().err
    assert 'Loading weights' not in err and 'it/s]' not in err, err


@pytest.mark.slow  # imports sentence-transformers
def test_unknown_model_is_a_clear_error_and_nothing_is_downloaded(tmp_path):
    with pytest.raises(ConfigError, match='cannot load embedding model'):
        SentenceTransformerEncoder(str(tmp_path / 'no-such-model'), 'cpu')


def test_vectors_are_unit_length_and_batch_shaped(encoder):
    vectors = encoder.encode(['land the drone', 'take a photo', ''])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)
    assert 'battery' in encoder.known_words()


def test_onnx_backend_matches_torch_and_is_cached(encoder, tmp_path, monkeypatch):
    monkeypatch.setenv('TOOL_ROUTER_CACHE', str(tmp_path))
    texts = ['land the drone', 'monitor the battery and land when it drops below 25%', 'x']
    onnx = SentenceTransformerEncoder(encoder.model_id, 'cpu', backend='onnx')
    exported = list(tmp_path.rglob('model.onnx'))
    assert len(exported) == 1
    cos = (onnx.encode(texts) * encoder.encode(texts)).sum(axis=1)
    assert np.all(cos > 0.9999)
    assert onnx.known_words() == encoder.known_words()
    again = SentenceTransformerEncoder(encoder.model_id, 'cpu', backend='onnx')  # from cache
    assert list(tmp_path.rglob('model.onnx')) == exported
    assert np.allclose(again.encode(texts), onnx.encode(texts), atol=1e-6)


def test_length_groups_cut_sorted_texts_into_passes_by_padding_and_pass_cost():
    # a request of 20 tokens and its clauses of 8-9: the clauses are not padded to 20
    assert length_groups([20, 9, 8, 8], 64, pass_cost=12) == [(0, 1), (1, 4)]
    # similar lengths share one pass; one text is one pass; nothing is none
    assert length_groups([10, 10, 9], 64, pass_cost=12) == [(0, 3)]
    assert length_groups([7], 64) == [(0, 1)] and length_groups([], 64) == []
    # no pass holds more than batch_size texts, and the slices cover every text once, in order
    groups = length_groups([5] * 10, 4, pass_cost=12)
    assert all(hi - lo <= 4 for lo, hi in groups)
    assert [i for lo, hi in groups for i in range(lo, hi)] == list(range(10))
    # a free pass puts every text in its own pass (no padding at all)
    assert length_groups([9, 5, 3], 64, pass_cost=0) == [(0, 1), (1, 2), (2, 3)]


def test_onnx_vectors_do_not_depend_on_the_texts_sharing_a_pass(encoder, monkeypatch):
    onnx = SentenceTransformerEncoder(encoder.model_id, 'cpu', backend='onnx')
    session = onnx._model.session
    shapes = []

    class Recording:  # the real session, its input shapes recorded
        def run(self, names, feed):
            shapes.append(feed['input_ids'].shape)
            return session.run(names, feed)

    monkeypatch.setattr(onnx._model, 'session', Recording())
    texts = ['fly to the north field, photograph the barn and when the battery is low '
             'come back home and land there', 'land', 'photograph the barn', 'come back home']
    together = onnx.encode(texts)
    alone = np.concatenate([onnx.encode([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-6)
    # the long request went in a pass of its own; the clauses were not padded to its length
    assert len(shapes) == 2 + len(texts)
    assert shapes[0][0] == 1 and shapes[1][0] == 3 and shapes[1][1] < shapes[0][1] / 2


def test_passes_of_one_call_run_at_once_and_give_the_same_vectors(encoder, monkeypatch):
    in_turn = SentenceTransformerEncoder(encoder.model_id, 'cpu', backend='onnx')
    at_once = SentenceTransformerEncoder(encoder.model_id, 'cpu', backend='onnx', pass_threads=2)
    session = at_once._model.session
    both = threading.Barrier(2, timeout=60)  # passes only if two passes are in flight together
    threads = set()

    class Meeting:  # the real session; its first two passes must meet
        calls = 0

        def run(self, names, feed):
            Meeting.calls += 1
            threads.add(threading.get_ident())
            if Meeting.calls <= 2:
                both.wait()
            return session.run(names, feed)

    monkeypatch.setattr(at_once._model, 'session', Meeting())
    texts = ['fly to the north field, photograph the barn and when the battery is low '
             'come back home and land there', 'photograph the barn', 'come back home']
    vectors = at_once.encode(texts)
    assert Meeting.calls == 2 and len(threads) == 2  # the request's pass beside its clauses'
    assert np.array_equal(vectors, in_turn.encode(texts))  # the same to the last bit


def _passes_model(pass_threads):
    model = object.__new__(OnnxSentenceModel)  # only the pass scheduling, no weights
    model.pass_threads, model._helpers = pass_threads, None
    return model


@pytest.mark.parametrize('pass_threads', [1, 2, 3])
def test_every_pass_runs_once_and_a_failed_pass_is_raised(pass_threads):
    model = _passes_model(pass_threads)
    groups = [(0, 1), (1, 3), (3, 4), (4, 6)]
    ran, lock = [], threading.Lock()

    def one_pass(group):
        with lock:
            ran.append((group, threading.get_ident()))

    model._run_passes(groups, one_pass)
    assert sorted(g for g, _ in ran) == groups
    if pass_threads == 1:  # in turn, on the caller's thread, longest first
        assert ran == [(g, threading.get_ident()) for g in groups]

    def failing(group):
        if group == (3, 4):
            raise ValueError('pass failed')

    with pytest.raises(ValueError, match='pass failed'):
        model._run_passes(groups, failing)


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ConfigError, match='unknown backend'):
        SentenceTransformerEncoder('all-MiniLM-L6-v2', 'cpu', backend='tensorflow')
