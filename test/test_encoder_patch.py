"""The fine-tuned encoder: patch application, both backends on the same weights, determinism."""
from pathlib import Path

import numpy as np
import pytest

from tool_router.routing.embeddings import (
    DEFAULT_MODEL,
    FINETUNED_MODEL,
    PATCH_FILE,
    SentenceTransformerEncoder,
    apply_patch,
    resolve_model,
    save_patch,
)
from tool_router.common.errors import ConfigError
from tool_router.common.paths import config_path

pytestmark = pytest.mark.slow  # loads MiniLM

TEXTS = ['land the drone', 'whats the batery at', 'if the pack drops below 30% come home']


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv('TOOL_ROUTER_CACHE', str(tmp_path / 'cache'))
    return tmp_path / 'cache'


def test_shipped_patch_runs_the_same_on_onnx_and_torch(cache):
    torch_enc = SentenceTransformerEncoder(FINETUNED_MODEL, 'cpu', backend='torch', threads=1)
    onnx_enc = SentenceTransformerEncoder(FINETUNED_MODEL, 'cpu', backend='onnx', threads=1)
    stock = SentenceTransformerEncoder(DEFAULT_MODEL, 'cpu', backend='torch', threads=1)
    a, b, s = (e.encode(TEXTS) for e in (torch_enc, onnx_enc, stock))
    assert np.all((a * b).sum(axis=1) > 0.9999)  # one set of weights on both backends
    assert np.all((a * s).sum(axis=1) < 0.9999)  # and they are not the stock ones
    # the ONNX export sits under the patched directory's name, which carries the patch hash
    exported = list((cache / 'onnx').glob(f'{FINETUNED_MODEL}-*/model.onnx'))
    assert len(exported) == 1
    assert torch_enc.weights_id.startswith(FINETUNED_MODEL + '@')
    assert stock.weights_id == DEFAULT_MODEL


def test_a_refit_patch_is_a_new_cached_model(cache, tmp_path):
    from safetensors.numpy import load_file

    base = resolve_model(DEFAULT_MODEL)
    shipped = load_file(str(config_path(PATCH_FILE)))
    first = apply_patch(base, config_path(PATCH_FILE))
    assert resolve_model(FINETUNED_MODEL) == first  # made once, then reused
    import torch

    other = {k: torch.from_numpy(v * np.float16(0.5)) for k, v in shipped.items()}
    patch = tmp_path / 'other.safetensors'
    save_patch(other, patch, {'note': 'test'})
    second = apply_patch(base, patch)
    assert second != first and Path(second, 'patch.json').exists()
    v1 = SentenceTransformerEncoder(first, 'cpu', backend='torch').encode(TEXTS)
    v2 = SentenceTransformerEncoder(second, 'cpu', backend='torch').encode(TEXTS)
    assert not np.allclose(v1, v2, atol=1e-3)


def test_a_patch_that_does_not_fit_is_refused(cache, tmp_path):
    import torch

    patch = tmp_path / 'bad.safetensors'
    save_patch({'encoder.layer.5.output.dense.weight': torch.zeros(3, 3, dtype=torch.float16)},
               patch, {})
    with pytest.raises(ConfigError, match='does not fit'):
        apply_patch(resolve_model(DEFAULT_MODEL), patch)
    with pytest.raises(ConfigError, match='missing'):
        apply_patch(resolve_model(DEFAULT_MODEL), tmp_path / 'none.safetensors')


def test_fine_tuning_is_deterministic_and_touches_only_the_top_layers():
    import torch

    from tool_router.evaluation.fitting.encoder import Recipe, TopLayers, TrainingSet, train

    ts = TrainingSet(['battery_status', 'return_to_home', '<out_of_scope>'],
                     [['how much battery is left', 'battery level'],
                      ['fly back home', 'return to launch'], ['tell me a joke']])
    for text, gold in [('whats the batery at', [0]), ('come home now', [1]),
                       ('play some music', [2]), ('batt low? then rtl', [0, 1])]:
        ts.add(text, gold)
    recipe = Recipe(layers=1, epochs=2, batch=2)
    top = TopLayers(Path(resolve_model(DEFAULT_MODEL)), recipe.layers)
    runs = []
    for _ in range(2):
        top.reset()
        train(top, ts, recipe, log=lambda _: None)
        runs.append(top.patch())
    assert runs[0].keys() == runs[1].keys()
    assert runs[0] and all(k.startswith('encoder.layer.5.') for k in runs[0])
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in runs[0])
    assert all(v.dtype == torch.float16 for v in runs[0].values())
    stock = TopLayers(Path(resolve_model(DEFAULT_MODEL)), 1).patch()
    assert any(not torch.equal(runs[0][k], stock[k]) for k in stock)  # it did train
    # the margin and the out-of-scope weight reach the loss
    top.reset()
    train(top, ts, Recipe(layers=1, epochs=2, batch=2, margin=0.1, oos_weight=2.0),
          log=lambda _: None)
    assert any(not torch.equal(runs[0][k], v) for k, v in top.patch().items())


def test_two_trained_layers_patch_both():
    import torch

    from tool_router.evaluation.fitting.encoder import Recipe, TopLayers, TrainingSet, train

    ts = TrainingSet(['battery_status', '<out_of_scope>'],
                     [['how much battery is left'], ['tell me a joke']])
    ts.add('whats the batery at', [0])
    ts.add('play some music', [1])
    top = TopLayers(Path(resolve_model(DEFAULT_MODEL)), 2)
    stock = top.patch()
    train(top, ts, Recipe(layers=2, epochs=1, batch=2), log=lambda _: None)
    patch = top.patch()
    assert {k.split('.')[2] for k in patch} == {'4', '5'}
    for layer in ('4', '5'):
        assert any(not torch.equal(v, stock[k]) for k, v in patch.items()
                   if k.split('.')[2] == layer)
