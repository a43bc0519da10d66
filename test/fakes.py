"""A deterministic stand-in for the sentence encoder, for hand-made policy cases.

Not a mock of behaviour we rely on: it is a real bag-of-words encoder (unit
vectors over a fixed vocabulary), so distances can be worked out by hand.
"""
from __future__ import annotations

import re

import numpy as np


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
