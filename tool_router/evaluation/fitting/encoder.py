"""``tool-router fit encoder``: fine-tune the sentence encoder's top layers on a development set.

What is trained: the last ``layers`` transformer layers of the stock
all-MiniLM-L6-v2 (the rest stays frozen), contrastively, so that an operator's
wording lands near the catalog texts of the tools it asks for. Every anchor
text is scored (scaled cosine) against one text per class - one of each tool's
example / condition phrases, drawn afresh each step, and one out-of-scope
phrase of ``config/scope.yaml`` for the extra "out of scope" class (short
texts: a step stays cheap) - and the loss is the cross-entropy towards the anchor's gold classes
(uniform over them for a multi-tool request): the catalog-as-classes form of
a multiple-negatives ranking loss, without in-batch false negatives.

Anchors, all from the development data and the catalog:

* every request (an out-of-scope one towards the out-of-scope class) and its
  ``dataset augment`` noise variants (typos, shorthand, preambles, ...);
* the clauses of multi-tool requests, each towards the gold tool it is closest
  to under the stock model (a clause far from every gold tool is left out);
* the catalog's own documents, example and condition phrases and the
  out-of-scope phrases, so the catalog keeps its shape.

The frozen layers run once per text (their output is cached), so a run costs
a few CPU minutes. Deterministic: one seed drives the anchor order and the
class texts, torch runs single-threaded, dropout is off. The result is a
*patch*: the trained layers in fp16, applied to the stock weights at load
(:func:`tool_router.routing.embeddings.apply_patch`). Refuses a dataset that shares
requests with a test split (:mod:`.guard`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from tool_router.common.clauses import normalise, split_clauses
from tool_router.evaluation.dataset import Example

SEED = 20261130
OOS = '<out_of_scope>'


@dataclass(frozen=True)
class Recipe:
    """The fine-tuning constants (chosen by 5-fold cross-validation on dev, docs/ENCODER.md)."""

    layers: int = 3  # top transformer layers trained
    epochs: int = 2
    batch: int = 32
    lr: float = 5e-5
    scale: float = 20.0  # cosine -> logit
    margin: float = 0.0  # additive cosine margin taken off the gold classes' logits (AM-softmax)
    oos_weight: float = 1.0  # loss weight of out-of-scope anchors (the others weigh 1)
    augment_per_example: int = 2
    clause_min_similarity: float = 0.3
    seed: int = SEED

    def as_dict(self) -> dict[str, Any]:
        """The recipe as plain JSON values (stored in the patch)."""
        return dict(self.__dict__)


@dataclass
class TrainingSet:
    """Anchors with their gold classes, and the texts that stand for each class."""

    classes: list[str]
    class_texts: list[list[str]]
    anchors: list[str] = field(default_factory=list)
    targets: list[tuple[int, ...]] = field(default_factory=list)

    def add(self, text: str, gold: Sequence[int]) -> None:
        """One anchor (empty text or no class: skipped)."""
        if text.strip() and gold:
            self.anchors.append(text)
            self.targets.append(tuple(sorted(set(gold))))


def catalog_classes(
    catalog: Any, scope_phrases: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    """(class names, texts of each class): the catalog's tools plus the out-of-scope class."""
    names = [t.name for t in catalog] + [OOS]
    texts = [[*t.examples, *t.conditions] or [t.document] for t in catalog]
    return names, texts + [list(scope_phrases)]


def clause_texts(request: str) -> list[str]:
    """The counting clauses of a request as lcr embeds them (conditions with their connective)."""
    return [c.embedded for c in split_clauses(normalise(request))
            if not (c.negated or c.steering)]


def build_training_set(
    examples: Sequence[Example],
    catalog: Any,
    scope_phrases: Sequence[str],
    recipe: Recipe,
    embed: Callable[[list[str]], np.ndarray],
) -> TrainingSet:
    """The anchors of a fine-tuning run (module docstring); ``embed`` is the stock encoder."""
    from tool_router.evaluation.augment import augment

    names, texts = catalog_classes(catalog, scope_phrases)
    col = {n: i for i, n in enumerate(names)}
    ts = TrainingSet(names, texts)
    examples = list(examples)
    noisy = augment(examples, recipe.augment_per_example, recipe.seed)
    for ex in [*examples, *noisy]:
        ts.add(ex.request, [col[t] for t in ex.tools] if ex.tools else [col[OOS]])
    # clauses of multi-tool requests, towards their closest gold tool under the stock model
    pending: list[tuple[str, tuple[int, ...]]] = []
    for ex in examples:
        if len(ex.tools) < 2:
            continue
        gold = tuple(col[t] for t in ex.tools)
        pending += [(c, gold) for c in dict.fromkeys(clause_texts(ex.request))]
    if pending:
        flat = [t for ts_ in texts for t in ts_]
        owner = np.array([k for k, ts_ in enumerate(texts) for _ in ts_])
        sims = embed([c for c, _ in pending]) @ embed(flat).T
        for (clause, gold), row in zip(pending, sims):
            best = {k: float(row[owner == k].max()) for k in gold}
            k = max(best, key=lambda g: best[g])
            if best[k] >= recipe.clause_min_similarity:
                ts.add(clause, [k])
    for k, tool in enumerate(catalog):
        ts.add(tool.document, [k])
    for k, class_texts in enumerate(texts):
        for t in class_texts:
            ts.add(t, [k])
    return ts


class TopLayers:
    """The stock transformer split in two: frozen bottom (run once per text), trainable top."""

    def __init__(self, base: Path, layers: int) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch = torch
        self.model = AutoModel.from_pretrained(str(base), attn_implementation='eager').eval()
        self.tokenizer = AutoTokenizer.from_pretrained(str(base))
        cfg = base / 'sentence_bert_config.json'
        self.max_len = (
            int(json.loads(cfg.read_text()).get('max_seq_length', 256)) if cfg.exists() else 256
        )
        n = self.model.config.num_hidden_layers
        if not 1 <= layers <= n:
            raise ValueError(f'layers must be within 1..{n}')
        self.first = n - layers
        self.top = self.model.encoder.layer[self.first :]
        for p in self.model.parameters():
            p.requires_grad_(False)
        for p in self.top.parameters():
            p.requires_grad_(True)
        self._bottom: dict[str, Any] = {}
        self._stock = {k: v.clone() for k, v in self.top.state_dict().items()}

    def reset(self) -> None:
        """Put the stock weights back in the top layers (the frozen cache stays valid)."""
        self.top.load_state_dict(self._stock)

    def cache(self, texts: Sequence[str], batch: int = 64) -> None:
        """Run the frozen layers once for every new text (sorted by length: little padding)."""
        torch = self.torch
        new = sorted(set(texts) - self._bottom.keys(), key=lambda t: (len(t), t))
        with torch.no_grad():
            for lo in range(0, len(new), batch):
                chunk = new[lo : lo + batch]
                enc = self.tokenizer(chunk, padding=True, truncation=True,
                                     max_length=self.max_len, return_tensors='pt')
                out = self.model(**enc, output_hidden_states=True)
                hidden = out.hidden_states[self.first]
                for i, t in enumerate(chunk):
                    n = int(enc['attention_mask'][i].sum())
                    self._bottom[t] = hidden[i, :n].clone()

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit sentence vectors through the top layers (with gradients when training)."""
        torch = self.torch
        self.cache(texts)
        states = [self._bottom[t] for t in texts]
        width = max(s.shape[0] for s in states)
        h = torch.zeros(len(states), width, states[0].shape[1])
        mask = torch.zeros(len(states), width)
        for i, s in enumerate(states):
            h[i, : s.shape[0]] = s
            mask[i, : s.shape[0]] = 1.0
        ext = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
        for layer in self.top:
            out = layer(h, attention_mask=ext)
            h = out[0] if isinstance(out, tuple) else out
        pooled = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=1)

    def embed_numpy(self, texts: list[str]) -> np.ndarray:
        """``embed`` without gradients, as float32 numpy."""
        with self.torch.no_grad():
            out = [self.embed(texts[lo : lo + 64]).numpy() for lo in range(0, len(texts), 64)]
        return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)

    def patch(self) -> dict[str, Any]:
        """The trained layers as a state dict (fp16, the stock model's key names)."""
        sd = self.model.state_dict()
        n = len(self.model.encoder.layer)
        keep = tuple(f'encoder.layer.{i}.' for i in range(self.first, n))
        return {k: v.detach().to(self.torch.float16).contiguous() for k, v in sd.items()
                if k.startswith(keep)}


def train(
    top: TopLayers, ts: TrainingSet, recipe: Recipe, log: Callable[[str], Any] = print
) -> None:
    """Contrastive training of ``top``'s trainable layers on ``ts`` (deterministic)."""
    torch = top.torch
    torch.manual_seed(recipe.seed)
    rng = random.Random(recipe.seed)
    top.cache(ts.anchors + [t for texts in ts.class_texts for t in texts])
    params = [p for p in top.top.parameters()]
    opt = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=0.01)
    order = list(range(len(ts.anchors)))
    oos = len(ts.classes) - 1 if ts.classes and ts.classes[-1] == OOS else -1
    steps = 0
    for epoch in range(recipe.epochs):
        rng.shuffle(order)
        total = 0.0
        for lo in range(0, len(order), recipe.batch):
            idx = order[lo : lo + recipe.batch]
            anchors = top.embed([ts.anchors[i] for i in idx])
            classes = top.embed([rng.choice(texts) for texts in ts.class_texts])
            target = torch.zeros(len(idx), len(ts.class_texts))
            weight = torch.ones(len(idx))
            for r, i in enumerate(idx):
                gold = ts.targets[i]
                target[r, list(gold)] = 1.0 / len(gold)
                if gold == (oos,):
                    weight[r] = recipe.oos_weight
            logits = recipe.scale * (anchors @ classes.T - recipe.margin * (target > 0))
            per_anchor = -(target * torch.log_softmax(logits, dim=1)).sum(1)
            loss = (weight * per_anchor).sum() / weight.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            steps += 1
            if steps % 50 == 0:
                log(f'step {steps}: loss {float(loss.detach()):.4f}')
        mean = total / len(order)
        log(f'epoch {epoch + 1}/{recipe.epochs}: {steps} steps, mean loss {mean:.4f}')


def fine_tune(
    base: Path,
    examples: Sequence[Example],
    catalog: Any,
    scope_phrases: Sequence[str],
    recipe: Recipe = Recipe(),
    log: Callable[[str], Any] = print,
    top: TopLayers | None = None,
) -> dict[str, Any]:
    """Train on ``examples`` and return the patch (fp16 state dict of the trained layers).

    ``top``: a :class:`TopLayers` of the same recipe to reuse (its frozen cache); reset first.
    """
    import torch

    torch.set_num_threads(1)  # deterministic and polite on a shared CPU
    if top is None:
        top = TopLayers(base, recipe.layers)
    top.reset()
    ts = build_training_set(examples, catalog, scope_phrases, recipe, top.embed_numpy)
    log(f'{len(ts.anchors)} anchors, {len(ts.classes)} classes, top {recipe.layers} layer(s)')
    train(top, ts, recipe, log)
    return top.patch()


def fit(
    dataset: Path,
    catalog: Any,
    out: Path,
    recipe: Recipe = Recipe(),
    log: Callable[[str], Any] = print,
    fold: tuple[int, int] | None = None,
) -> Path:
    """Fine-tune on ``dataset`` (never a test split) and write the patch to ``out``.

    ``fold`` = (k, n): train without writer fold k of n (:func:`writer_folds`), a fold patch
    for ``fit lcr --cross-fit``.
    """
    from tool_router.routing.embeddings import DEFAULT_MODEL, resolve_model, save_patch
    from tool_router.evaluation.dataset import load_jsonl
    from tool_router.evaluation.fitting.guard import refuse_reporting_data
    from tool_router.routing.policies.lcr import load_scope_phrases

    examples = load_jsonl(dataset, catalog)
    if not refuse_reporting_data(examples, str(dataset)):
        log('warning: no test split found to check the dataset against')
    base = Path(resolve_model(DEFAULT_MODEL))
    extra: dict[str, str] = {}
    if fold is not None:
        k, n = fold
        if not 0 <= k < n:
            raise ValueError(f'fold {k} is not within 0..{n - 1}')
        folds = writer_folds(examples, n)
        extra = fold_meta(examples, folds, k)
        examples = [ex for ex in examples if folds[ex.id] != k]
        log(f'fold {k} of {n}: training on {len(examples)} requests')
    tensors = fine_tune(base, examples, catalog, load_scope_phrases(), recipe, log)
    meta = {'base': DEFAULT_MODEL, 'trained_on': dataset.name, 'n_requests': str(len(examples)),
            'recipe': json.dumps(recipe.as_dict(), sort_keys=True), **extra}
    save_patch(tensors, out, meta)
    log(f'wrote {out}')
    return out


def writer_folds(examples: Sequence[Example], folds: int) -> dict[str, int]:
    """Request id -> fold, grouped by writer (requests without one form the group "-").

    Every writer's requests share a fold, so a fold encoder has never seen the wording of the
    writers it is asked about (the condition of the test split and of the outside sets).
    Groups go largest first to the fold with the fewest requests so far (ties: lowest fold);
    deterministic. Fewer groups than folds is an error.
    """
    groups: dict[str, list[str]] = {}
    for ex in examples:
        groups.setdefault(str((ex.model_extra or {}).get('writer', '-')), []).append(ex.id)
    if len(groups) < folds:
        raise ValueError(f'{len(groups)} writers cannot fill {folds} folds')
    size = [0] * folds
    out: dict[str, int] = {}
    for _, ids in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        k = min(range(folds), key=lambda j: (size[j], j))
        size[k] += len(ids)
        out.update(dict.fromkeys(ids, k))
    return out


def fold_meta(examples: Sequence[Example], fold: dict[str, int], k: int) -> dict[str, str]:
    """What a fold patch records: the fold and a digest of the request ids it never saw."""
    import hashlib

    held = sorted(ex.id for ex in examples if fold[ex.id] == k)
    digest = hashlib.sha256('\n'.join(held).encode()).hexdigest()[:16]
    return {'fold': str(k), 'folds': str(len(set(fold.values()))), 'held_out': digest}
