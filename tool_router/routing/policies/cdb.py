"""The source paper's three retrieval routers, re-implemented over our index.

* ``cdbv1`` - one query (the whole request); keep every tool whose nearest record
  lies within a fixed distance threshold.
* ``cdbv2`` - one query; keep tools within a margin of the nearest result.
* ``cdbv3`` - clause-aware aggregated retrieval: query the full prompt and its
  fragments, add up evidence per tool across fragments, add lexical support
  from the tool name, summary and description, rank, and truncate at a score
  gap (0.28); the router's ``max_tools`` (8, the paper's bound) cuts the rest.

The constants the paper gives (gap 0.28, at most 8, HNSW settings) are kept;
the others were chosen on the development split only (``docs/CONSTANTS.md``).
Distances are Chroma's squared l2 between unit vectors (0 = identical, 2 =
orthogonal); similarities are ``1 - d/2`` (cosine).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Iterable

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.clauses import fragments, normalise
from tool_router.routing.index import CatalogIndex, Hit
from tool_router.routing.policies.base import Decision, Evidence, LexicalMatcher

if TYPE_CHECKING:
    from tool_router.routing.policies.registry import PolicyContext


class CDBv1Params(BaseModel):
    """Constants of cdbv1 (the paper's fixed threshold)."""

    model_config = ConfigDict(extra='forbid')
    top_k: int = Field(10, ge=1, le=64, description='Neighbours retrieved for the request.')
    max_distance: float = Field(
        1.60, gt=0, le=4, description='Keep tools whose record is at most this far.'
    )


class CDBv2Params(BaseModel):
    """Constants of cdbv2 (threshold relative to the nearest tool)."""

    model_config = ConfigDict(extra='forbid')
    top_k: int = Field(10, ge=1, le=64, description='Neighbours retrieved for the request.')
    margin: float = Field(0.20, ge=0, le=4, description='Keep tools within d_min + margin.')


class CDBv3Params(BaseModel):
    """Constants of cdbv3 (clause-aware aggregation)."""

    model_config = ConfigDict(extra='forbid')
    top_k: int = Field(4, ge=1, le=64, description='Neighbours retrieved per fragment.')
    sim_floor: float = Field(
        0.2, ge=-1, le=1, description='Similarity below which a hit adds no evidence.'
    )
    lexical_weight: float = Field(
        0.3, ge=0, le=5, description='Weight of lexical support (0..1) in a score.'
    )
    gap: float = Field(
        0.28, ge=0, le=1, description='Truncate at a drop larger than this (normalised score).'
    )
    gap_mode: str = Field(
        'consecutive',
        pattern='^(consecutive|top)$',
        description='consecutive: drop between neighbours in the ranking; top: below best - gap.',
    )


def _per_tool_nearest(hits: Iterable[Hit]) -> dict[str, float]:
    best: dict[str, float] = {}
    for hit in hits:
        if hit.tool not in best or hit.distance < best[hit.tool]:
            best[hit.tool] = hit.distance
    return best


class _SingleQuery:
    """One query (the whole request); subclasses choose which nearest tools to keep."""

    name = ''
    params: CDBv1Params | CDBv2Params

    def __init__(self, index: CatalogIndex, params: CDBv1Params | CDBv2Params) -> None:
        self.index, self.params = index, params

    def keep(self, nearest: list[tuple[str, float]]) -> list[tuple[str, float]]:
        raise NotImplementedError

    def route(self, text: str, max_tools: int) -> Decision:
        text = normalise(text)
        hits = self.index.query(self.index.embed([text]), self.params.top_k)[0]
        nearest = sorted(_per_tool_nearest(hits).items(), key=lambda kv: kv[1])
        kept = self.keep(nearest)  # the router cuts at max_tools and reports the cut
        return Decision(
            self.name,
            [t for t, _ in kept],
            [round(1 - d / 2, 4) for _, d in kept],
            fragments=[text],
            evidence={
                t: [Evidence('retrieval', text, 'tool record', round(d, 4))] for t, d in nearest
            },
            candidates=[(t, 1 - d / 2) for t, d in nearest],
            abstained=not kept,
            note='' if kept else 'no tool close enough',
        )


class CDBv1(_SingleQuery):
    """Fixed distance threshold on the single-query nearest neighbours."""

    name = 'cdbv1'
    params: CDBv1Params

    def __init__(self, index: CatalogIndex, params: CDBv1Params | None = None) -> None:
        super().__init__(index, params or CDBv1Params())

    def keep(self, nearest: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """Tools within ``max_distance``."""
        return [(t, d) for t, d in nearest if d <= self.params.max_distance]


class CDBv2(_SingleQuery):
    """Threshold relative to the nearest result."""

    name = 'cdbv2'
    params: CDBv2Params

    def __init__(self, index: CatalogIndex, params: CDBv2Params | None = None) -> None:
        super().__init__(index, params or CDBv2Params())

    def keep(self, nearest: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """Tools within ``margin`` of the nearest one."""
        d_min = nearest[0][1] if nearest else 0.0
        return [(t, d) for t, d in nearest if d <= d_min + self.params.margin]


class CDBv3:
    """Clause-aware aggregated retrieval with lexical support and gap truncation."""

    name = 'cdbv3'

    def __init__(self, index: CatalogIndex, params: CDBv3Params | None = None) -> None:
        self.index, self.params = index, params or CDBv3Params()
        self.lexical = LexicalMatcher(index.catalog)

    def route(self, text: str, max_tools: int) -> Decision:
        """Retrieve per fragment, aggregate per tool, truncate at the score gap."""
        p = self.params
        frags = fragments(text)
        results = self.index.query(self.index.embed(frags), p.top_k)
        score: dict[str, float] = defaultdict(float)
        evidence: dict[str, list[Evidence]] = defaultdict(list)
        for frag, hits in zip(frags, results):
            for tool, d in _per_tool_nearest(hits).items():
                sim = 1 - d / 2
                if sim > p.sim_floor:
                    score[tool] += sim - p.sim_floor
                    evidence[tool].append(
                        Evidence('retrieval', frag, 'tool record', round(sim, 4))
                    )
        for tool, (value, matched) in self.lexical.support(text).items():
            score[tool] += p.lexical_weight * value
            evidence[tool].append(Evidence('lexical', '', ' '.join(matched), round(value, 4)))
        ranked = sorted(score.items(), key=lambda kv: -kv[1])
        if not ranked or ranked[0][1] <= 0:
            return Decision(
                self.name,
                [],
                [],
                frags,
                dict(evidence),
                ranked,
                abstained=True,
                note='no evidence above the similarity floor',
            )
        top = ranked[0][1]
        norm = [(t, s / top) for t, s in ranked]
        kept = [norm[0]]
        for tool, s in norm[1:]:  # the router cuts at max_tools and reports the cut
            reference = kept[-1][1] if p.gap_mode == 'consecutive' else 1.0
            if reference - s > p.gap:
                break
            kept.append((tool, s))
        return Decision(
            self.name,
            [t for t, _ in kept],
            [round(s, 4) for _, s in kept],
            frags,
            dict(evidence),
            norm,
        )


def build_v1(ctx: 'PolicyContext') -> CDBv1:
    """The registry's factory for ``cdbv1``."""
    return CDBv1(ctx.index, ctx.params(CDBv1Params))


def build_v2(ctx: 'PolicyContext') -> CDBv2:
    """The registry's factory for ``cdbv2``."""
    return CDBv2(ctx.index, ctx.params(CDBv2Params))


def build_v3(ctx: 'PolicyContext') -> CDBv3:
    """The registry's factory for ``cdbv3``."""
    return CDBv3(ctx.index, ctx.params(CDBv3Params))
