"""What every policy returns, and the interface it implements."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from tool_router.catalog import Catalog

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
STOPWORDS = frozenset("""
a an the and or of to in on at for from by with into onto over under as is are be been being it
its this that these those there here then than so if when once until before after while do does
did done can could would should will shall may might must please me my we our us you your i
them they their he she his her what which who whom whose how where why all any some no not just
up down out off about again more most very too also only current currently given new one each
per e g eg such other etc vehicle drone uav
""".split())


def words(text: str) -> list[str]:
    """Lower-case word tokens."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` without stop words and single letters."""
    return {w for w in words(text) if w not in STOPWORDS and len(w) > 1}


@dataclass(frozen=True)
class Evidence:
    """Why a tool was considered: one retrieved record or one lexical match."""

    source: str  # 'retrieval' | 'lexical' | 'model' | 'llm'
    fragment: str  # the query fragment ('' for whole-request evidence)
    detail: str  # the matched record text or words
    value: float  # similarity, distance or contribution

    def as_dict(self) -> dict[str, Any]:
        """The evidence as a plain dict (for JSON)."""
        return asdict(self)


@dataclass
class Decision:
    """A policy's answer: tools best first, with scores and the evidence behind them."""

    policy: str
    tools: list[str]
    scores: list[float]
    fragments: list[str] = field(default_factory=list)
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    candidates: list[tuple[str, float]] = field(default_factory=list)  # before truncation
    confidence: float = 1.0  # policy's own confidence in the whole answer (0..1)
    abstained: bool = False  # True when the policy decided that no tool serves the request
    note: str = ''
    clause_index: dict[str, int] = field(default_factory=dict)  # tool -> clause that chose it
    conditions: dict[str, str] = field(default_factory=dict)  # tool -> gating condition text
    extra: dict[str, Any] = field(default_factory=dict)

    def explanation(self) -> dict[str, Any]:
        """JSON-ready explanation: fragments, per-tool evidence, candidates."""
        return {
            'policy': self.policy,
            'fragments': self.fragments,
            'abstained': self.abstained,
            'confidence': round(self.confidence, 4),
            'note': self.note,
            'candidates': [[t, round(s, 4)] for t, s in self.candidates[:12]],
            'evidence': {
                t: [e.as_dict() for e in ev[:4]]
                for t, ev in self.evidence.items()
                if t in self.tools
            },
            'clause_index': self.clause_index,
            'conditions': self.conditions,
            **({'extra': self.extra} if self.extra else {}),
        }


class Policy(Protocol):
    """A routing policy."""

    name: str

    def route(self, text: str, max_tools: int) -> Decision:
        """Choose tools for ``text``, at most ``max_tools``."""


class LexicalMatcher:
    """Word overlap between a request and each tool's name, summary and description."""

    def __init__(self, catalog: Catalog) -> None:
        self._name = {t.name: set(t.name.split('_')) - STOPWORDS for t in catalog}
        self._text = {t.name: content_words(f'{t.summary} {t.description}') for t in catalog}

    def support(self, text: str) -> dict[str, tuple[float, list[str]]]:
        """Map tool -> (support in 0..1, matched words), for tools with any match."""
        req = content_words(text)
        stems = {w.rstrip('s') for w in req}
        out: dict[str, tuple[float, list[str]]] = {}
        for tool, name_words in self._name.items():
            name_hits = [w for w in name_words if w in req or w.rstrip('s') in stems]
            text_hits = sorted(w for w in self._text[tool] if w in req)
            if not name_hits and not text_hits:
                continue
            value = 0.5 * len(name_hits) / max(1, len(name_words)) + 0.5 * min(
                1.0, len(text_hits) / 3
            )
            out[tool] = (value, sorted(name_hits) + text_hits)
        return out
