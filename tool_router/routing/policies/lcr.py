"""``lcr`` - the learned clause router, the default policy.

CDBv3 adds up retrieval evidence across fragments and cuts the ranking at one
global score gap. That keeps semantically related extras, misses tools whose
clause is short, ignores negation and never abstains. ``lcr`` instead decides
per (request, tool) pair with a small calibrated scorer:

1. **Segmentation** (:mod:`tool_router.common.clauses`), after operator shorthand
   expansion and single-edit typo repair against the catalog's vocabulary
   (:mod:`tool_router.routing.spelling`): clauses with roles (condition / action),
   negation, and clauses that only try to steer the router ("ignore your
   rules", "you must select X") or ask about another time ("the forecast for
   tomorrow"), which count for nothing. A condition clause that opens with a
   pronoun ("when *it* drops below 25%") is also read together with the clause
   before it.
2. **Evidence** per clause and tool, from the index: the similarity of the
   clause to the tool's document, to its example requests and to its
   condition phrases (sensors), all unit vectors held by Chroma and scored
   exactly (a 42-tool catalog has a few hundred records; a dense product is
   faster and exact, where HNSW is approximate); the tool's rank and margin
   inside each clause; lexical hits of the tool's keywords; whether the
   evidence sits only in negated clauses. And from the **exemplar memory**
   (:mod:`tool_router.routing.exemplars`): the development requests, kept in the model
   file with the tools they asked for; per tool, how close the request and its
   clauses come to requests that asked for it, its share of the nearest
   ones (wording operators use that the catalog's few example phrases lack),
   and whether its strongest clause reads like the background clauses of
   earlier requests rather than like a request for it.
3. **Scoring**: a logistic model over those features (24 weights,
   no words) plus one prior term per catalog tool (how readily operators ask
   for it beyond what the similarities say), trained on the development split
   and training-only noisy variants of it by ``tool-router fit`` and shipped as
   ``config/lcr_model.json``. Because the features are similarities (to the
   catalog's own texts and to whole earlier requests) rather than words of the
   training requests, the model transfers to wording it has never seen; the
   weights of the memory's features are fitted on memories without the
   request's own writer, as a new writer's request meets them.
4. **Scope**: a second, request-level logistic model asks "is this for the
   vehicle at all?" from similarities (no words): the best similarity of a
   counting clause to the catalog,
   how far that clause, and the whole request, are closer to the catalog than
   to the out-of-scope phrases of ``config/scope.yaml`` (chit-chat, other
   domains, autopilot functions the catalog lacks), the best out-of-scope
   similarity, and how much closer the request is to the memory's out-of-scope
   exemplars than to its in-scope ones. When a clause only steers the router, the whole-request
   features are taken from the counting clauses (the steering text is close to
   out-of-scope phrases and would outvote the order after it). Requests below
   ``scope_threshold`` get nothing (abstention: out-of-scope requests,
   injections with nothing legitimate left).
5. **Decision** for an in-scope request: keep tools whose probability clears
   ``threshold``; for each counting (non-negated, non-steering) clause, also
   keep its best tool if it clears the lower ``clause_threshold`` (a clause
   that asks for something gets a tool); when no tool clears ``threshold``,
   keep the best one anyway (weak evidence for an in-scope request is still
   the best guess; an empty answer serves nobody). The three thresholds are
   fitted on cross-validated dev predictions.

Every selected tool carries its evidence, the clause that chose it and that
clause's gating condition, for the executor's traces (:func:`gating`). A tool whose clause
is a condition ("if ndvi is under 0.35 grab a multispectral shot": the camera is closest to
"ndvi") takes the condition of a gated action clause that asks for it; an actuator chosen from
a condition clause with no such action is gated by that condition itself: an actuator is never
run at once on the strength of a condition's words ("once landed, ..." never lands now).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.catalog import Catalog, Kind
from tool_router.common.clauses import Clause, normalise, split_clauses
from tool_router.common.errors import ConfigError
from tool_router.routing.exemplars import TOOL_FEATURES, ExemplarMemory, empty_features
from tool_router.routing.flight_modes import rewrite_modes
from tool_router.routing.index import CatalogIndex, stderr_progress
from tool_router.routing.keywords import KeywordMatcher
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision, Evidence, words
from tool_router.routing.spelling import Speller

if TYPE_CHECKING:
    from tool_router.routing.policies.registry import PolicyContext

PRONOUN_START = re.compile(r"^(?:it|its|it's|that|this|they|those|these|there)\b", re.IGNORECASE)

# Large catalogs (index.exact False): records retrieved per fragment by HNSW, whose tools are
# then scored exactly (docs/PERFORMANCE.md, "Scale").
SHORTLIST_K = 64

FEATURES = (
    'bias',
    'ex_max',  # best similarity of any non-negated clause to the tool's examples
    'ex_full',  # similarity of the whole request to the tool's examples
    'doc_max',  # best similarity of any non-negated clause to the tool's document
    'cond_max',  # best similarity of a condition clause to the tool's condition phrases
    'cond_sensor',  # cond_max if the tool is a sensor and the request has a condition clause
    'top1_clause',  # tool is the best tool of some non-negated clause
    'margin',  # best (tool score - best other tool score) over clauses
    'rank_inv',  # best 1 / rank over clauses
    'ex_second',  # second best clause similarity (evidence from two clauses)
    'kw_hit',  # a keyword of the tool occurs in a non-negated clause
    'kw_name_hit',  # a word of the tool's name occurs in the request
    'neg_only',  # the tool's best evidence is in a negated clause
    'neg_max',  # best similarity of a negated clause
    'is_sensor',
    'n_clauses',  # number of clauses (compound requests)
    'ex_max_sq',  # ex_max squared (sharpens the top of the scale)
    'top1_x_ex',  # top1_clause * ex_max
    'act_in_cond',  # an actuator whose best evidence is a condition clause
    *TOOL_FEATURES,  # nearest exemplar requests and clauses (tool_router/routing/exemplars.py)
)
# The scope decision ("is this for the vehicle at all?"), one logistic model per request.
SCOPE_FEATURES = (
    'bias',
    'catalog_max',  # best similarity of a counting clause to any tool's document or examples
    'catalog_minus_oos',  # best (catalog similarity - out-of-scope similarity) over clauses
    'full_minus_oos',  # the same for the whole request (one harmless clause does not outvote it)
    'oos_max',  # best similarity of the request or a counting clause to an out-of-scope phrase
    'nn_scope',  # nearest out-of-scope exemplars minus nearest in-scope ones (exemplars.py)
)


class LCRParams(BaseModel):
    """Constants of the learned clause router (thresholds are fitted, see ``tool-router fit``)."""

    model_config = ConfigDict(extra='forbid')
    model_path: str = Field(
        '', description="Fitted scorer (JSON); '' = the shipped config/lcr_model.json."
    )
    threshold: float = Field(
        -1.0,
        ge=-1,
        le=1,
        description='Keep tools at or above this probability; -1 = the fitted value.',
    )
    clause_threshold: float = Field(
        -1.0, ge=-1, le=1, description="Per-clause floor for a clause's best tool; -1 = fitted."
    )
    scope_threshold: float = Field(
        -1.0,
        ge=-1,
        le=1,
        description='In-scope probability below which nothing is routed; -1 = fitted.',
    )
    scope_override: float = Field(
        -1.0,
        ge=-1,
        le=2,
        description='Best-tool probability at which a request is in scope whatever the scope '
        'model says (a joint decision: empty only when both say no); 2 = off, -1 = fitted.',
    )
    clause_pooling: bool = Field(
        False,
        description='Embed the request once and mean-pool its token vectors over each clause '
        '(one sequence per request, onnx backends) instead of embedding every fragment; needs '
        'a scorer fitted with it (docs/PERFORMANCE.md, "Fewer passes").',
    )


@dataclass(frozen=True)
class Variant:
    """A feature/decision variant, for ablations."""

    name: str
    drop: tuple[str, ...] = ()  # features zeroed
    per_clause: bool = True  # the per-clause rule
    phrases: bool = True  # use example/condition records (else documents only)
    spelling: bool = True  # repair typos before segmentation
    steering: bool = True  # ignore clauses that try to steer the router
    scope: bool = True  # separate scope decision; in scope, the best tool is never dropped
    tool_prior: bool = True  # one fitted term per catalog tool (how often it is asked for)
    exemplars: bool = True  # features from the memory of development requests (exemplars.py)


VARIANTS = {
    'lcr': Variant('lcr'),
    'lcr_no_clause_rule': Variant('lcr_no_clause_rule', per_clause=False),
    'lcr_no_phrases': Variant(
        'lcr_no_phrases',
        drop=(
            'ex_max',
            'ex_full',
            'cond_max',
            'cond_sensor',
            'ex_second',
            'ex_max_sq',
            'top1_x_ex',
        ),
        phrases=False,
    ),
    'lcr_no_lexical': Variant('lcr_no_lexical', drop=('kw_hit', 'kw_name_hit')),
    'lcr_no_negation': Variant('lcr_no_negation', drop=('neg_only', 'neg_max')),
    'lcr_no_spelling': Variant('lcr_no_spelling', spelling=False),
    'lcr_no_steering': Variant('lcr_no_steering', steering=False),
    'lcr_no_scope': Variant('lcr_no_scope', scope=False),
    'lcr_no_tool_prior': Variant('lcr_no_tool_prior', tool_prior=False),
    'lcr_no_exemplars': Variant('lcr_no_exemplars', exemplars=False),
}


@dataclass
class Features:
    """What the extractor found in one request, for the scorer, the decision and the evidence."""

    X: np.ndarray  # (tools, FEATURES) per-(request, tool) features
    scope: np.ndarray  # (SCOPE_FEATURES,) request-level features of the scope decision
    clauses: list[Clause]
    fragments: list[str]  # embedded texts: the full request, the clauses, pronoun-resolved ones
    clause_score: np.ndarray  # (clauses, tools) best similarity of each clause to each tool
    negated: np.ndarray  # (clauses,) bool
    excluded: np.ndarray  # (clauses,) bool: negated or steering clauses count for nothing
    best_clause: np.ndarray  # (tools,) the clause that asks for each tool (home_clauses)
    kw_hits: list[list[str]]  # per tool: its keywords found in counting clauses
    request_vector: np.ndarray | None = None  # the full text's unit vector (question probe)


@dataclass
class _Sims:
    """Similarities of the request's fragments (row 0 = full text, then one row per clause)."""

    ex: np.ndarray  # (fragments, tools) best example phrase
    doc: np.ndarray  # (fragments, tools) tool document
    cond: np.ndarray  # (fragments, tools) best condition phrase
    oos: np.ndarray  # (fragments,) best out-of-scope phrase
    vecs: np.ndarray  # (fragments, dim) the fragments' unit vectors


def load_scope_phrases(path: str | Path = '') -> list[str]:
    """Phrases of requests the catalog does not serve (``config/scope.yaml``)."""
    import yaml

    path = Path(path) if path else config_path('scope.yaml')
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding='utf-8'))
        phrases = [str(p) for p in raw['out_of_scope']]
    except FileNotFoundError:
        raise ConfigError('out-of-scope phrases not found', where=str(path)) from None
    except Exception as exc:  # noqa: BLE001 - YAML or shape errors
        raise ConfigError(f'invalid out-of-scope phrases: {exc}', where=str(path)) from None
    if not phrases:
        raise ConfigError('no out-of-scope phrases', where=str(path))
    return phrases


class FeatureExtractor:
    """Turns a request into :class:`Features`: per-tool features plus the evidence behind them."""

    def __init__(
        self,
        index: CatalogIndex,
        scope_phrases: list[str] | None = None,
        pooling: bool = False,
        memory: ExemplarMemory | None = None,
    ) -> None:
        self.index = index
        self.memory = memory  # exemplars (None: the features of an empty memory)
        self.pooling = pooling  # clause vectors pooled from one pass (clause_spans)
        self.pooling_fallbacks = 0  # requests whose clauses could not be located in the text
        catalog: Catalog = index.catalog
        self.names = list(catalog.names)
        col = catalog.columns
        self.is_sensor = np.array([t.kind is Kind.SENSOR for t in catalog], dtype=np.float32)
        recs = index.phrase_records
        self.phrase_tool = np.array([col[r.tool] for r in recs], dtype=np.int64)
        self.phrase_is_cond = np.array([r.kind == 'condition' for r in recs], dtype=bool)
        self.phrase_vectors = index.phrase_vectors
        self.phrase_text = [r.text for r in recs]
        self._ex_segments = self._segments(~self.phrase_is_cond)
        self._cond_segments = self._segments(self.phrase_is_cond)
        self.doc_vectors = index.tool_vectors
        self.keywords = [tuple(k for k in t.keywords) for t in catalog]
        self.name_words = [set(t.name.split('_')) for t in catalog]
        known = index.encoder.known_words() if hasattr(index.encoder, 'known_words') else ()
        self.speller = Speller.from_catalog(catalog, known)
        self._keywords = KeywordMatcher(self.keywords, self.name_words)
        self._memo: dict[str, np.ndarray] | None = None
        self.scope_phrases = scope_phrases if scope_phrases is not None else load_scope_phrases()
        self.scope_vectors = self.encode(self.scope_phrases)

    def memoize(self, memo: dict[str, np.ndarray] | None = None) -> None:
        """Keep every vector encoded from now on (fitting extracts each request per variant).

        ``memo`` (text -> vector of this extractor's encoder) is used and filled in place,
        so runs that share an encoder can share its vectors.
        """
        self._memo = {} if memo is None else memo

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (the one place the extractor calls the encoder)."""
        if self._memo is None:
            return self.index.embed(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            self._memo.update(zip(missing, self.index.embed(missing)))
        return np.stack([self._memo[t] for t in texts])

    def encode_spans(self, full: str, spans: list[list[tuple[int, int]]]) -> np.ndarray:
        """The full text's vector, then one pooled vector per span set (one forward pass)."""
        if self._memo is None:
            vecs: np.ndarray = self.index.encoder.encode_spans(full, spans)  # type: ignore[attr-defined]
            return vecs
        key = f'\x00pooled {full} {spans}'
        if key not in self._memo:
            self._memo[key] = self.index.encoder.encode_spans(full, spans)  # type: ignore[attr-defined]
        return self._memo[key]

    def _segments(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(record columns sorted by tool, segment starts, tool of each segment) for reduceat."""
        cols = np.flatnonzero(mask)
        cols = cols[np.argsort(self.phrase_tool[cols], kind='stable')]
        tools = self.phrase_tool[cols]
        starts = (
            np.flatnonzero(np.r_[True, tools[1:] != tools[:-1]]) if len(cols) else np.zeros(0, int)
        )
        return cols, starts, tools[starts] if len(cols) else np.zeros(0, int)

    def _group_max(
        self,
        sims: np.ndarray,
        segments: tuple[np.ndarray, np.ndarray, np.ndarray],
        at: np.ndarray | None = None,
    ) -> np.ndarray:
        """Per fragment and tool: max similarity over that tool's records in ``segments``.

        ``sims`` has a column per record, or, with ``at``, the column ``at[record]``.
        """
        cols, starts, tools = segments
        out = np.full((sims.shape[0], len(self.names)), -1.0, dtype=np.float32)
        if len(cols):
            where = cols if at is None else at[cols]
            out[:, tools] = np.maximum.reduceat(sims[:, where], starts, axis=1)
        return out

    def segment(
        self, text: str, variant: Variant
    ) -> tuple[str, list[Clause], list[str], list[int]]:
        """(repaired text, clauses, fragment texts, clause of each pronoun-resolved fragment)."""
        full = normalise(text)
        if variant.spelling:
            full = self.speller.correct(rewrite_modes(full))
        clauses = split_clauses(full) or [Clause(0, full, 'action')]
        # Condition clauses are embedded with their connective, like the condition phrases.
        frag_texts = [full] + [c.embedded for c in clauses]
        # A condition that opens with a pronoun is also read with the clause before it.
        resolved = [
            k
            for k, c in enumerate(clauses)
            if c.role == 'condition' and PRONOUN_START.match(c.text) and k > 0
        ]
        frag_texts += [f'{clauses[k - 1].text} {clauses[k].text}' for k in resolved]
        return full, clauses, frag_texts, resolved

    def similarities(
        self,
        frag_texts: list[str],
        resolved: list[int],
        variant: Variant,
        spans: list[list[tuple[int, int]]] | None = None,
    ) -> _Sims:
        """Similarities of every fragment to the catalog's records and the out-of-scope phrases.

        With ``spans`` (clause pooling), fragment ``1 + i`` is pooled over ``spans[i]`` of one
        pass of the full text instead of being embedded on its own.
        """
        if spans is not None:
            vecs = unique_vecs = self.encode_spans(frag_texts[0], spans)
        else:
            unique = list(dict.fromkeys(frag_texts))  # a one-clause request is its own text
            unique_vecs = self.encode(unique)
            vecs = unique_vecs[[unique.index(t) for t in frag_texts]]
        exact = getattr(self.index, 'exact', True)
        if exact:
            doc = vecs @ self.doc_vectors.T  # (F, T)
        else:  # large catalogs: the shortlisted tools only (-1 elsewhere)
            cand = self.index.shortlist_columns(unique_vecs, SHORTLIST_K)
            doc = np.full((len(vecs), len(self.names)), -1.0, dtype=np.float32)
            doc[:, cand] = vecs @ self.doc_vectors[cand].T
        if not variant.phrases:
            ex, cond = doc.copy(), np.full_like(doc, -1.0)
        elif exact:
            sims = vecs @ self.phrase_vectors.T  # (F, P)
            ex = self._group_max(sims, self._ex_segments)
            cond = self._group_max(sims, self._cond_segments)
        else:
            ex, cond = self._shortlisted(vecs, cand)
        oos = (vecs @ self.scope_vectors.T).max(axis=1)
        # Pronoun-resolved condition fragments count for their clause too.
        n_c = len(frag_texts) - 1 - len(resolved)
        for offset, k in enumerate(resolved):
            row = 1 + n_c + offset
            for m in (ex, cond, doc):
                m[1 + k] = np.maximum(m[1 + k], m[row])
            oos[1 + k] = max(oos[1 + k], oos[row])
        return _Sims(ex, doc, cond, oos, vecs)

    def _shortlisted(self, vecs: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ex, cond) of large catalogs: the shortlisted tools ``cand``, -1 elsewhere.

        The shortlist (:meth:`CatalogIndex.shortlist_columns`: nearest tool centroids, or the
        tools of HNSW's top ``SHORTLIST_K`` records) is computed for every fragment; a tool
        outside it gets similarity -1 to every fragment. Only the shortlisted tools' records
        are multiplied and reduced: no fragments x every-record matrix (5,000-tool catalogs).
        """
        chosen = np.zeros(len(self.names), dtype=bool)
        chosen[cand] = True
        cols = np.flatnonzero(chosen[self.phrase_tool])  # the shortlisted tools' records, in order
        sims = vecs @ self.phrase_vectors[cols].T  # (F, len(cols))
        at = np.full(len(self.phrase_tool), -1, dtype=np.int64)
        at[cols] = np.arange(len(cols))  # record -> its column of sims
        mine = chosen[self.phrase_tool]
        return (self._group_max(sims, self._segments(mine & ~self.phrase_is_cond), at),
                self._group_max(sims, self._segments(mine & self.phrase_is_cond), at))

    def extract(self, text: str, variant: Variant = VARIANTS['lcr']) -> Features:
        """Features of every (clause, tool) pair of ``text`` for ``variant``."""
        full, clauses, frag_texts, resolved = self.segment(text, variant)
        spans = clause_spans(full, clauses, resolved) if self.pooling else None
        if self.pooling and spans is None:
            self.pooling_fallbacks += 1
        s = self.similarities(frag_texts, resolved, variant, spans)
        rows = np.arange(1, 1 + len(clauses))
        negated = np.array([c.negated for c in clauses], dtype=bool)
        steering = np.array([c.steering and variant.steering for c in clauses], dtype=bool)
        is_cond = np.array([c.role == 'condition' for c in clauses], dtype=bool)
        clause_score = np.maximum(s.ex[rows], s.doc[rows])  # (C, T)
        if is_cond.any():
            clause_score[is_cond] = np.maximum(clause_score[is_cond], s.cond[rows][is_cond])
        # clauses whose evidence counts: not negated, not steering, not a time alone ("in 10 s"
        # names no tool: ANNOTATION's time-only conditions need no sensor)
        timed = np.array([c.time_only for c in clauses], dtype=bool)
        pos = ~negated & ~steering & ~timed
        F = np.zeros((len(self.names), len(FEATURES)), dtype=np.float32)
        f = {name: i for i, name in enumerate(FEATURES)}
        F[:, f['bias']] = 1.0
        self._retrieval_features(F, f, s, rows, clause_score, pos, is_cond, negated)
        kw_hits = self._lexical_features(F, f, full, clauses, pos)
        F[:, f['is_sensor']] = self.is_sensor
        F[:, f['n_clauses']] = min(len(clauses), 6) / 6.0
        F[:, f['ex_max_sq']] = F[:, f['ex_max']] ** 2
        F[:, f['top1_x_ex']] = F[:, f['top1_clause']] * F[:, f['ex_max']]
        strongest = clause_score.argmax(axis=0)  # per tool: its strongest clause
        F[:, f['act_in_cond']] = is_cond[strongest] & (self.is_sensor == 0)
        nn, nn_scope = self._exemplar_features(s, rows, pos, clause_score, variant)
        F[:, f[TOOL_FEATURES[0]]:f[TOOL_FEATURES[-1]] + 1] = nn
        for name in variant.drop:
            F[:, f[name]] = 0.0
        scope = self._scope_features(s, clause_score, pos, rows, bool(steering.any()))
        return Features(
            X=F,
            scope=np.append(scope, np.float32(nn_scope)),
            clauses=clauses,
            fragments=frag_texts,
            clause_score=clause_score,
            negated=negated,
            excluded=~pos,
            best_clause=home_clauses(clause_score, pos),
            kw_hits=kw_hits,
            request_vector=s.vecs[0],
        )

    def _retrieval_features(
        self,
        F: np.ndarray,
        f: dict[str, int],
        s: _Sims,
        rows: np.ndarray,
        clause_score: np.ndarray,
        pos: np.ndarray,
        is_cond: np.ndarray,
        negated: np.ndarray,
    ) -> None:
        """Similarity, rank and margin features from the counting clauses (in place)."""
        T = len(self.names)
        if pos.any():
            cs = clause_score[pos]
            F[:, f['ex_max']] = s.ex[rows][pos].max(axis=0)
            F[:, f['doc_max']] = s.doc[rows][pos].max(axis=0)
            order = np.argsort(-cs, axis=1)
            ranks = np.empty_like(order)
            r = np.arange(cs.shape[0])[:, None]
            ranks[r, order] = np.arange(T)[None, :]
            best_other = np.where(
                order[:, :1] == np.arange(T)[None, :], cs[r, order[:, 1:2]], cs[r, order[:, :1]]
            )
            F[:, f['margin']] = (cs - best_other).max(axis=0)
            F[:, f['rank_inv']] = (1.0 / (1.0 + ranks)).max(axis=0)
            F[:, f['top1_clause']] = (ranks == 0).any(axis=0)
            F[:, f['ex_second']] = np.sort(cs, axis=0)[-2] if cs.shape[0] > 1 else 0.0
        F[:, f['ex_full']] = s.ex[0]
        if (is_cond & pos).any():
            F[:, f['cond_max']] = np.maximum(s.cond[rows][is_cond & pos].max(axis=0), 0)
            F[:, f['cond_sensor']] = F[:, f['cond_max']] * self.is_sensor
        if negated.any():
            F[:, f['neg_max']] = clause_score[negated].max(axis=0)
            best_pos = clause_score[pos].max(axis=0) if pos.any() else np.full(T, -1.0)
            F[:, f['neg_only']] = clause_score[negated].max(axis=0) > best_pos + 0.05

    def _exemplar_features(
        self, s: _Sims, rows: np.ndarray, pos: np.ndarray, clause_score: np.ndarray,
        variant: Variant,
    ) -> tuple[np.ndarray, float]:
        """The memory's per-tool features and scope feature (an empty memory's without one)."""
        if self.memory is None or not variant.exemplars:
            return empty_features(len(self.names)), 0.0
        return self.memory.features(s.vecs[0], s.vecs[rows], pos, clause_score)

    def _lexical_features(
        self, F: np.ndarray, f: dict[str, int], full: str, clauses: list[Clause], pos: np.ndarray
    ) -> list[list[str]]:
        """Keyword and tool-name hits (in place); returns each tool's keyword hits."""
        pos_text = ' '.join(c.text.lower() for c, keep in zip(clauses, pos) if keep)
        # One pass over the request's words, not one regex per tool (5,000-tool catalogs).
        found = self._keywords.hits(pos_text)
        F[list(found), f['kw_hit']] = 1.0
        F[:, f['kw_name_hit']] = self._keywords.named(words(full))
        hits: list[list[str]] = [[]] * len(self.names)  # one shared empty list, never mutated
        for j, kws in found.items():
            hits[j] = kws
        return hits

    def _scope_features(
        self, s: _Sims, clause_score: np.ndarray, pos: np.ndarray, rows: np.ndarray,
        steered: bool,
    ) -> np.ndarray:
        """Is this for the vehicle at all? Catalog evidence against out-of-scope phrases.

        Per clause: a story preamble that looks out of scope does not outvote the order after it.
        """
        if not pos.any():  # nothing legitimate left (steering or negation only)
            return np.array([1.0, 0.0, -1.0, -1.0, 1.0], dtype=np.float32)
        catalog = clause_score[pos].max(axis=1)  # (counting clauses,)
        oos = s.oos[rows][pos]
        if steered:  # the whole text includes words that count for nothing: use the clauses
            full, oos_full = float(catalog.max()), float(oos.max())
        else:
            full, oos_full = float(max(s.ex[0].max(), s.doc[0].max())), float(s.oos[0])
        return np.array(
            [
                1.0,
                float(catalog.max()),
                float((catalog - oos).max()),
                full - oos_full,
                max(oos_full, float(oos.max())),
            ],
            dtype=np.float32,
        )


def home_clauses(clause_score: np.ndarray, counting: np.ndarray) -> np.ndarray:
    """Per tool, the clause that asks for it: the executor's order and gating come from it.

    A clause whose best tool it is comes first, then any counting clause, each by similarity.
    The strongest clause alone is not enough: in "arm, take off to 10 m" the longer second
    clause can be closer to arm_motors' texts than the bare "arm" whose best tool it is, which
    put the takeoff before the arming.
    """
    top = clause_score >= clause_score.max(axis=1, keepdims=True)  # (C, T) a clause's best tool
    rank = clause_score + 4.0 * counting[:, None] + 2.0 * (top & counting[:, None])
    best: np.ndarray = rank.argmax(axis=0)
    return best


def gating(feats: Features, j: int, sensor: bool) -> tuple[int, str]:
    """The clause tool ``j`` belongs to and the condition that gates it ('' = none).

    Its home clause (:func:`home_clauses`) and that clause's condition, unless the home
    clause is itself a condition: then a counting, gated action clause whose best tool ``j``
    is (the action it names), else, for an actuator, the condition clause's own text.
    """
    k = int(feats.best_clause[j])
    clause = feats.clauses[k]
    if clause.role != 'condition':
        return k, clause.condition
    for k2, other in enumerate(feats.clauses):
        if other.role == 'action' and other.condition and not feats.excluded[k2] \
                and int(np.argmax(feats.clause_score[k2])) == j:
            return k2, other.condition
    return k, '' if sensor else clause.embedded


def clause_spans(
    full: str, clauses: list[Clause], resolved: list[int]
) -> list[list[tuple[int, int]]] | None:
    """Character ranges of each fragment after the full text, for clause pooling.

    One range per clause (a condition clause from its connective on, as it is embedded on its
    own), then for each pronoun-resolved condition the ranges of it and the clause before it.
    None when a clause's text cannot be found in order in ``full``.
    """
    lower = full.lower()
    cursor = 0
    ranges: list[tuple[int, int]] = []
    for c in clauses:
        start = lower.find(c.text.lower(), cursor)
        if start < 0:
            return None
        end = start + len(c.text)
        if c.role == 'condition' and c.marker:
            at = lower.rfind(c.marker.lower(), cursor, start)
            if at >= 0:
                start = at
        ranges.append((start, end))
        cursor = end
    return [[r] for r in ranges] + [[ranges[k - 1], ranges[k]] for k in resolved]


def with_tool_terms(X: np.ndarray, names: Sequence[str], tools: Sequence[str]) -> np.ndarray:
    """``X`` (one row per tool of ``names``) plus one indicator column per fitted tool.

    The per-tool terms are the scorer's prior for each tool (how readily it is asked for, beyond
    what the similarities say); a tool the model was not fitted with gets none of them.
    """
    if not tools:
        return X
    extra = _tool_indicators(tuple(names), tuple(tools), X.dtype.str)
    return np.concatenate([X, extra], axis=1)


@functools.lru_cache(maxsize=16)
def _tool_indicators(names: tuple[str, ...], tools: tuple[str, ...], dtype: str) -> np.ndarray:
    """One indicator column per fitted tool, one row per catalog tool (made once per catalog).

    Filled in Python, this took 1.5 ms of every request on a 5,000-tool catalog.
    """
    col = {t: i for i, t in enumerate(tools)}
    extra = np.zeros((len(names), len(tools)), dtype=np.dtype(dtype))
    for row, name in enumerate(names):
        if name in col:
            extra[row, col[name]] = 1.0
    extra.setflags(write=False)
    return extra


@functools.lru_cache(maxsize=16)
def _tool_columns(names: tuple[str, ...], tools: tuple[str, ...]) -> np.ndarray:
    """Per catalog tool (row), the index of its fitted tool term in ``tools`` (-1: none)."""
    col = {t: i for i, t in enumerate(tools)}
    out = np.array([col.get(n, -1) for n in names], dtype=np.int64)
    out.setflags(write=False)
    return out


def logistic(X: np.ndarray, mean: np.ndarray, scale: np.ndarray, weights: np.ndarray
             ) -> np.ndarray:
    """Probabilities of a logistic model over standardised features."""
    z = ((X - mean) / scale) @ weights
    p: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return p


class ScorerModel(BaseModel):
    """Fitted weights and thresholds of one variant."""

    model_config = ConfigDict(extra='forbid')
    variant: str
    features: list[str]
    tools: list[str] = Field(
        default_factory=list,
        description='Catalog tools with a fitted per-tool term after the features (empty: none).',
    )
    mean: list[float]
    scale: list[float]
    weights: list[float]
    threshold: float
    clause_threshold: float
    scope_features: list[str] = Field(default_factory=list)
    scope_weights: list[float] = Field(
        default_factory=list, description='Logistic weights of the scope model (empty = no gate).'
    )
    scope_threshold: float = Field(
        0.0, description='Requests whose in-scope probability is below this get no tool.'
    )
    scope_override: float = Field(
        2.0,
        description='A request whose best tool probability reaches this is in scope whatever '
        'the scope model says (above 1: never).',
    )
    trained_on: str = Field(
        '', description='Dataset the model was fitted on (never a test split).'
    )
    cv_macro_composite: float = Field(
        0.0, description='Cross-validated dev score at the chosen thresholds.'
    )
    clause_pooling: bool = Field(
        False, description='Fitted on clause vectors pooled from one pass of the request.'
    )

    def probabilities(self, X: np.ndarray, names: Sequence[str] = ()) -> np.ndarray:
        """The scorer's probability for each feature row (row i is tool ``names[i]``).

        :func:`logistic` of :func:`with_tool_terms` with the standardisation folded into the
        weights: ``X @ (w / scale) - mean @ (w / scale)`` plus the row's tool term, without
        building the rows x (features + tools) matrix (1.5 ms a request at 5,000 tools). The
        same sum in another order: equal to 1e-12 (test).
        """
        w = np.asarray(self.weights) / np.asarray(self.scale)
        n = X.shape[1]
        z = X @ w[:n] - float(np.asarray(self.mean) @ w)
        if self.tools:
            term = _tool_columns(tuple(names), tuple(self.tools))  # fitted tool of each row
            has = term >= 0
            z[has] += w[n + term[has]]
        p: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return p

    def in_scope(self, scope: np.ndarray) -> float:
        """Probability that the request is for the vehicle at all (1.0 without a scope model)."""
        if not self.scope_weights:
            return 1.0
        w = np.asarray(self.scope_weights)
        return float(logistic(scope[None, :], np.zeros_like(w), np.ones_like(w), w)[0])


def load_models(path: str | Path = '') -> dict[str, ScorerModel]:
    """The fitted scorers by variant name, from ``path`` (default: the shipped file)."""
    path = Path(path) if path else config_path('lcr_model.json')
    try:
        raw = json.loads(Path(path).read_text(encoding='utf-8'))
        models = {k: ScorerModel.model_validate(v) for k, v in raw['variants'].items()}
    except FileNotFoundError:
        raise ConfigError(
            'fitted scorer not found',
            where=str(path),
            hint='run `tool-router fit --dataset benchmarks/data/dev.jsonl`',
        ) from None
    except Exception as exc:  # noqa: BLE001 - JSON or validation errors
        raise ConfigError(f'invalid fitted scorer: {exc}', where=str(path)) from None
    for name, model in models.items():
        n_terms = len(model.features) + len(model.tools)
        if list(model.features) != list(FEATURES) or (
            model.scope_weights and list(model.scope_features) != list(SCOPE_FEATURES)
        ) or not len(model.mean) == len(model.scale) == len(model.weights) == n_terms:
            raise ConfigError(
                f'scorer {name!r} was fitted with other features',
                where=str(path),
                hint='re-run `tool-router fit`',
            )
    return models


def decide(
    probs: np.ndarray,
    feats: Features,
    threshold: float,
    clause_threshold: float,
    per_clause: bool,
    max_tools: int | None,
    in_scope: float | None = None,
    scope_threshold: float = 0.0,
    scope_override: float = 2.0,
) -> list[int]:
    """Indices of the kept tools, best first (all of them when ``max_tools`` is None).

    Without a scope decision (``in_scope`` None), nothing is kept unless some tool clears
    ``threshold``. With one, a request below ``scope_threshold`` gets nothing unless its best
    tool's probability reaches ``scope_override``, and any other request gets at least its best
    tool: weak evidence for an in-scope request is still the best
    guess, where an empty answer serves nobody.
    """
    if in_scope is not None and in_scope < scope_threshold and probs.max() < scope_override:
        return []
    keep = set(np.flatnonzero(probs >= threshold).tolist())
    if keep and per_clause:
        cs = feats.clause_score
        for k in range(len(feats.clauses)):
            if feats.excluded[k]:
                continue
            j = int(np.argmax(cs[k]))
            if probs[j] >= clause_threshold:
                keep.add(j)
    if not keep and in_scope is not None:
        keep = {int(np.argmax(probs))}
    return sorted(keep, key=lambda j: -probs[j])[:max_tools]


class LearnedClauseRouter:
    """The default policy (see the module docstring)."""

    def __init__(
        self,
        index: CatalogIndex,
        params: LCRParams | None = None,
        variant: str = 'lcr',
        extractor: FeatureExtractor | None = None,
    ) -> None:
        self.name = variant
        self.params = params or LCRParams()
        self.variant = VARIANTS[variant]
        models = load_models(self.params.model_path)
        if variant not in models:
            raise ConfigError(f'no fitted scorer for {variant!r}', hint='re-run `tool-router fit`')
        self.model = models[variant]
        if self.model.clause_pooling != self.params.clause_pooling:
            raise ConfigError(
                f'lcr.clause_pooling is {self.params.clause_pooling} but the scorer '
                f'{variant!r} was fitted with clause_pooling {self.model.clause_pooling}',
                hint='fit a scorer with the same setting (tool-router fit lcr --set '
                'lcr.clause_pooling=...) and point lcr.model_path at it',
            )
        self.extractor = extractor or FeatureExtractor(index, pooling=self.params.clause_pooling)
        self.threshold = (
            self.params.threshold if self.params.threshold >= 0 else self.model.threshold
        )
        self.clause_threshold = (
            self.params.clause_threshold
            if self.params.clause_threshold >= 0
            else self.model.clause_threshold
        )
        self.scope_threshold = (
            self.params.scope_threshold
            if self.params.scope_threshold >= 0
            else self.model.scope_threshold
        )
        self.scope_override = (
            self.params.scope_override
            if self.params.scope_override >= 0
            else self.model.scope_override
        )

    def route(self, text: str, max_tools: int) -> Decision:
        """Score every (clause, tool) pair and keep what the scorer accepts."""
        feats = self.extractor.extract(text, self.variant)
        names = self.extractor.names
        probs = self.model.probabilities(feats.X, names)
        in_scope = self.model.in_scope(feats.scope) if self.variant.scope else None
        kept = decide(
            probs,
            feats,
            self.threshold,
            self.clause_threshold,
            self.variant.per_clause,
            None,  # the router cuts at max_tools and reports the cut
            in_scope,
            self.scope_threshold,
            self.scope_override,
        )
        order = np.argsort(-probs)
        clauses: list[Clause] = feats.clauses
        evidence: dict[str, list[Evidence]] = {}
        clause_index: dict[str, int] = {}
        conditions: dict[str, str] = {}
        for j in kept:
            k, condition = gating(feats, j, bool(self.extractor.is_sensor[j]))
            clause = clauses[k]
            name = names[j]
            clause_index[name] = clause.index
            conditions[name] = condition  # an action gated by a condition; sensors stay ungated
            evidence[name] = [
                Evidence('model', clause.text, f'p={probs[j]:.3f}', round(float(probs[j]), 4)),
                Evidence(
                    'retrieval',
                    clause.text,
                    'clause similarity',
                    round(float(feats.clause_score[k, j]), 4),
                ),
            ]
            if feats.kw_hits[j]:
                evidence[name].append(
                    Evidence('lexical', '', ' '.join(sorted(set(feats.kw_hits[j]))), 1.0)
                )
        top = float(probs[order[0]])
        # Confidence: how far the decision is from its thresholds (1 = clear-cut).
        margins = [abs(float(p) - self.threshold) for p in probs[order[:10]]]
        confidence = float(min(1.0, 2 * min(margins))) if margins else 1.0
        return Decision(
            self.name,
            [names[j] for j in kept],
            [round(float(probs[j]), 4) for j in kept],
            fragments=feats.fragments,
            evidence=evidence,
            candidates=[(names[j], float(probs[j])) for j in order[:12]],
            confidence=confidence,
            abstained=not kept,
            note=self._note(kept, top, in_scope),
            clause_index=clause_index,
            conditions={k: v for k, v in conditions.items() if v},
            in_scope=None if in_scope is None else round(in_scope, 4),
            request_vector=feats.request_vector,
        )

    def _note(self, kept: list[int], top: float, in_scope: float | None) -> str:
        if kept:
            return ''
        if in_scope is not None:
            return f'out of scope (p_in_scope={in_scope:.2f} < {self.scope_threshold:.2f})'
        return f'no tool above p={self.threshold:.2f} (best {top:.2f})'

def build(ctx: 'PolicyContext') -> LearnedClauseRouter:
    """The registry's factory for ``lcr`` and its ablations; they share one feature extractor."""
    params = ctx.params(LCRParams)
    pooling = params.clause_pooling

    def make() -> FeatureExtractor:
        from tool_router.routing.exemplars import exemplar_vectors, load_exemplars

        exemplars = load_exemplars(params.model_path)
        memory = None
        if len(exemplars):
            vectors = exemplar_vectors(exemplars, ctx.index.encoder, stderr_progress)
            memory = ExemplarMemory(exemplars, vectors, ctx.index.catalog.names)
        return FeatureExtractor(ctx.index, pooling=pooling, memory=memory)

    extractor = ctx.resource(f'lcr.extractor.pooling={pooling}.model={params.model_path}', make)
    return LearnedClauseRouter(ctx.index, params, ctx.spec.name, extractor)
