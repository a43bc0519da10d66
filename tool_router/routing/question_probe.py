"""A second opinion on questions: does the whole request read as a question about a state.

The rules of :mod:`tool_router.routing.questions` read a question by its words. Each new dev
writer of state questions found shapes no rule knew ("takeoff went fine?", "not sure if we took
off", "winch status"): 15-40% of a new writer's questions slipped past the rules of their day.
Wording nobody on the team wrote will have more. The probe reads the request's meaning instead:
a logistic regression on the router's own sentence vector (the request as a whole, unit
length), fitted on dev by ``tool-router fit questions``
(:mod:`tool_router.evaluation.fitting.questions`): state questions of the dev question file and
of v2 dev (style ``question``, no actuator in their truth) against every dev request whose truth
has an actuator (orders of every style, polite ones included).

It is asked only where the rules found nothing: no clause of the request a question and none a
polite order (:func:`tool_router.routing.questions.answer_questions`). Its threshold is the
lowest of a grid at which no dev order, out of fold (folds grouped by writer), reads as a
question; a request at or above it is answered as a question (its actuators dropped, the
sensor that reads their state instead) and the explanation says so, with the probability.

The vector depends on the encoder's weights, so the file names them (``weights_id``); under any
other encoder (another patch, the fast tier's fake encoder) the probe is off, with one log
line, and the rules decide alone.
"""
from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tool_router.common.errors import ConfigError

log = logging.getLogger(__name__)

FORMAT = 'tool_router/question_probe/v1'


@dataclass(frozen=True)
class QuestionProbe:
    """Weights and bias of the logistic regression, its threshold and the encoder it reads."""

    weights: np.ndarray
    bias: float
    threshold: float
    weights_id: str
    fit: dict[str, Any] = field(default_factory=dict)  # how it was fitted (CV figures)

    def probability(self, vector: np.ndarray) -> float:
        """P(the request is a question about a state) for its sentence vector."""
        v = np.asarray(vector, dtype=np.float64).reshape(-1)
        if v.shape != self.weights.shape:
            raise ValueError(f'vector of {v.shape[0]} dimensions for a probe of '
                             f'{self.weights.shape[0]}')
        norm = float(np.linalg.norm(v))
        z = float(self.weights @ (v / norm if norm > 0 else v)) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def reads(self, encoder: Any) -> bool:
        """Whether ``encoder`` is the one the probe was fitted on."""
        return bool(self.weights_id) and getattr(encoder, 'weights_id', '') == self.weights_id

    def to_json(self) -> dict[str, Any]:
        """The file's JSON (``format``, ``weights_id``, threshold, bias, weights, fit)."""
        return {'format': FORMAT, 'weights_id': self.weights_id, 'threshold': self.threshold,
                'bias': self.bias, 'weights': [round(float(w), 6) for w in self.weights],
                'fit': self.fit}

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path``."""
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + '\n', encoding='utf-8')

    @classmethod
    def from_json(cls, raw: dict[str, Any], where: str = 'question probe') -> 'QuestionProbe':
        """The probe of ``raw``; ConfigError naming ``where`` when it is not one."""
        if not isinstance(raw, dict) or raw.get('format') != FORMAT:
            raise ConfigError(f'{where}: not a question probe (format {FORMAT} expected)')
        try:
            weights = np.asarray(raw['weights'], dtype=np.float64)
            bias, threshold = float(raw['bias']), float(raw['threshold'])
            weights_id = str(raw['weights_id'])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f'{where}: {exc}') from exc
        if weights.ndim != 1 or not weights.size or not np.isfinite(weights).all() \
                or not math.isfinite(bias) or not 0.0 < threshold <= 1.0:
            raise ConfigError(f'{where}: weights, bias or threshold out of range')
        return cls(weights, bias, threshold, weights_id, dict(raw.get('fit') or {}))


def load_probe(path: str | Path) -> QuestionProbe:
    """The probe of ``path``; ConfigError with the reason when it cannot be read."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding='utf-8'))
    except (OSError, ValueError) as exc:
        raise ConfigError(f'question probe {p}: {exc}') from exc
    return QuestionProbe.from_json(raw, f'question probe {p}')
