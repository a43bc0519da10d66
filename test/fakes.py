"""Deterministic stand-ins for the sentence encoder (the fast test tier's encoders).

Not mocks of behaviour we rely on: both are real bag-of-words encoders that
return unit float32 vectors, as :class:`tool_router.routing.embeddings.Encoder` asks.

* :class:`BagOfWordsEncoder` has a fixed vocabulary, so distances in hand-made
  policy cases can be worked out by hand.
* :class:`HashingEncoder` hashes any word into a fixed number of slots, so it
  can index the shipped catalog in milliseconds. Routing quality over it is
  meaningless; it is for tests where MiniLM is not the point (input checks,
  the allowlist gate, LLM fallback logic, reports). Tests that need MiniLM
  take the ``encoder``/``index``/``router`` fixtures and are marked slow.
"""
from __future__ import annotations

import re
import zlib
from typing import Sequence

import numpy as np

WORD = re.compile(r'[a-z0-9]+')


class BagOfWordsEncoder:
    model_id = 'bag-of-words-test'
    device = 'cpu'

    def __init__(self, vocabulary: list[str]) -> None:
        self.vocabulary = {w: i for i, w in enumerate(vocabulary)}
        self.dim = len(vocabulary) + 1  # last slot: texts with no known word

    def encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r'[a-z]+', text.lower()):
                if word in self.vocabulary:
                    out[row, self.vocabulary[word]] += 1.0
            if not out[row].any():
                out[row, -1] = 1.0
            out[row] /= np.linalg.norm(out[row])
        return out


def _stem(word: str) -> str:
    for suffix in ('ing', 'ed', 'es', 's'):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


class HashingEncoder:
    """Words (crudely stemmed) hashed with CRC-32 into ``dim`` slots, L2-normalised.

    CRC-32 rather than ``hash()``: the vectors are the same in every process.
    """

    model_id = 'hashing-test-encoder'
    device = 'cpu'

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.calls = 0  # texts encoded so far (lets a test see whether the model was used)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(str(text).lower()):
                out[row, zlib.crc32(_stem(word).encode()) % (self.dim - 1)] += 1.0
            if not out[row].any():
                out[row, -1] = 1.0  # last slot: texts without words
            out[row] /= np.linalg.norm(out[row])
        return out


def make_selection(request_id: str, tools=(), scores=None, conditions=None, clause_index=None,
                   explanation_json: str = '', **fields):
    """A pipeline Selection from per-tool lists, as tests write them (the product: choices)."""
    from tool_router.common.choice import ToolChoice
    from tool_router.common.explanation import Explanation
    from tool_router.executor.pipeline import Selection
    tools = list(tools)
    choices = [ToolChoice(tool=t,
                          score=float(scores[i]) if scores is not None else 0.0,
                          condition=conditions[i] if conditions is not None else '',
                          clause_index=int(clause_index[i]) if clause_index is not None else -1)
               for i, t in enumerate(tools)]
    return Selection(request_id=request_id, choices=choices,
                     explanation=Explanation.from_json(explanation_json), **fields)


def rule_decision(clause_index, conditions=None):
    """A policy's decision as the router's rules receive it (routing/*.py rules' tests).

    ``clause_index``: tool -> the clause that chose it, in the answer's order; scores fall by 0.1
    from 0.9 in that order.
    """
    from tool_router.routing.policies.base import Decision
    tools = list(clause_index)
    return Decision('lcr', tools, [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=dict(clause_index), conditions=dict(conditions or {}))
