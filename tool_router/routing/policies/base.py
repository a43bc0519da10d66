"""What every policy returns, and the interface it implements."""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Collection, Iterator, Protocol

from tool_router.common.catalog import Catalog, Kind
from tool_router.common.choice import ToolChoice
from tool_router.common.clauses import split_clauses
from tool_router.common.explanation import EvidenceItem, Explanation, HybridFacts, LLMFacts

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
    """A policy's answer: tools best first, with scores and the evidence behind them.

    A policy need not respect ``max_tools``: the router cuts the answer to its
    bound and reports what it cut (:class:`tool_router.common.explanation.Explanation`).
    """

    policy: str
    tools: list[str]
    scores: list[float]
    fragments: list[str] = field(default_factory=list)
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    candidates: list[tuple[str, float]] = field(default_factory=list)  # best first, uncut
    confidence: float = 1.0  # policy's own confidence in the whole answer (0..1)
    abstained: bool = False  # True when the policy decided that no tool serves the request
    note: str = ''
    clause_index: dict[str, int] = field(default_factory=dict)  # tool -> clause that chose it
    conditions: dict[str, str] = field(default_factory=dict)  # tool -> gating condition text
    fallback_used: bool = False  # an LLM's answer was used (hybrid)
    fallback_reason: str = ''  # why the LLM was or was not used
    llm: LLMFacts | None = None  # the LLM call behind this answer, if any
    hybrid: HybridFacts | None = None  # the hybrid gate's facts, if any
    in_scope: float | None = None  # a scope model's probability that the request is in scope
    # the request's sentence vector where the policy made one (lcr): the question probe reads it
    request_vector: Any = field(default=None, compare=False, repr=False)

    def aligned_scores(self) -> list[float]:
        """One score per tool (0.0 each when a policy gave none or a list of another length)."""
        if len(self.scores) == len(self.tools):
            return list(self.scores)
        return [0.0] * len(self.tools)

    def without(self, gone: Collection[str], note: str = '') -> 'Decision':
        """This decision without the tools ``gone`` names (a router rule's drop), ``note`` added.

        Their scores, evidence, clauses and gates go with them; an answer left empty is an
        abstention.
        """
        kept = [(t, s) for t, s in zip(self.tools, self.aligned_scores()) if t not in gone]
        return replace(
            self, tools=[t for t, _ in kept], scores=[s for _, s in kept],
            evidence={t: e for t, e in self.evidence.items() if t not in gone},
            clause_index={t: i for t, i in self.clause_index.items() if t not in gone},
            conditions={t: c for t, c in self.conditions.items() if t not in gone},
            abstained=self.abstained or not kept,
            note='; '.join(x for x in (self.note, note) if x))

    def with_rule_tool(self, tool: str, score: float, clause: int, fragment: str, detail: str,
                       condition: str = '') -> 'Decision':
        """This decision with ``tool`` added by a router rule (routing/speeds.py and its kin).

        The tool gets ``score``, the clause it answers, one ``rule`` evidence item (the
        fragment that made the rule fire, and why) and ``condition`` as its gate ('' = none:
        any gate the policy gave the tool is dropped).
        """
        evidence = dict(self.evidence)
        evidence[tool] = [Evidence('rule', fragment, detail, round(score, 4))]
        conditions = {t: c for t, c in self.conditions.items() if t != tool}
        if condition:
            conditions[tool] = condition
        return replace(self, tools=[*self.tools, tool],
                       scores=[*self.aligned_scores(), score], evidence=evidence,
                       clause_index={**self.clause_index, tool: clause}, conditions=conditions)

    def with_tool_replaced(self, gone: str, tool: str | None, clause: int, fragment: str,
                           detail: str, note: str) -> 'Decision':
        """This decision with ``gone`` dropped (``note``) and ``tool`` answering in its place.

        A router rule's correction ("kill the floodlight" is the light's, not a motor cut:
        routing/payload_kills.py, face_home.py, mission_stops.py): ``tool`` takes ``gone``'s
        score and gate; ``tool`` None or already chosen, the drop alone. An answer left holding
        a tool is no abstention.
        """
        score = self.aligned_scores()[self.tools.index(gone)]
        gate = self.conditions.get(gone, '')
        kept = self.without({gone}, note)
        if tool is None or tool in kept.tools:
            return kept
        added = kept.with_rule_tool(tool, score, clause, fragment, detail, gate)
        return replace(added, abstained=False)

    def capped(self, max_tools: int) -> 'Decision':
        """This decision as the router will serve it: at most ``max_tools`` tools."""
        if len(self.tools) <= max_tools:
            return self
        return replace(self, tools=self.tools[:max_tools], scores=self.scores[:max_tools])

    def choice(self, tool: str, score: float) -> ToolChoice:
        """The typed choice of one of this decision's tools (clause, condition, evidence)."""
        return ToolChoice(
            tool=tool, score=float(score), clause_index=int(self.clause_index.get(tool, -1)),
            condition=self.conditions.get(tool, ''),
            evidence=[EvidenceItem(**e.as_dict()) for e in self.evidence.get(tool, [])[:4]])

    def choices(self) -> list[ToolChoice]:
        """Every tool of this decision as a :class:`ToolChoice`, best first."""
        return [self.choice(t, s) for t, s in zip(self.tools, self.scores)]

    def explanation(self) -> Explanation:
        """The policy's part of the explanation: fragments, per-tool evidence, candidates."""
        tools = set(self.tools)
        return Explanation(
            policy=self.policy,
            fragments=list(self.fragments),
            abstained=self.abstained,
            confidence=round(self.confidence, 4),
            note=self.note,
            candidates=[(t, round(s, 4)) for t, s in self.candidates[:12]],
            evidence={
                t: [EvidenceItem(**e.as_dict()) for e in ev[:4]]
                for t, ev in self.evidence.items()
                if t in tools
            },
            clause_index={t: i for t, i in self.clause_index.items() if t in tools},
            conditions={t: c for t, c in self.conditions.items() if t in tools},
            fallback_used=self.fallback_used,
            fallback_reason=self.fallback_reason,
            llm=self.llm,
            hybrid=self.hybrid,
            in_scope=self.in_scope,
        )


# When the request being routed arrived (time.perf_counter()), set by the router around
# Policy.route: a policy with a deadline (hybrid) counts from here, so time spent before
# the policy runs (waiting for a worker, building the policy on first use, the screen)
# is inside the deadline, not added to it.
_REQUEST_STARTED: ContextVar[float | None] = ContextVar('request_started', default=None)


@contextmanager
def request_clock(started: float) -> Iterator[None]:
    """Route inside this block for a request that arrived at ``started`` (perf_counter)."""
    token = _REQUEST_STARTED.set(started)
    try:
        yield
    finally:
        _REQUEST_STARTED.reset(token)


def request_started() -> float:
    """When the request being routed arrived (now, outside a :func:`request_clock` block)."""
    started = _REQUEST_STARTED.get()
    return time.perf_counter() if started is None else started


class Policy(Protocol):
    """A routing policy.

    ``max_tools`` is the bound the router will apply to the answer. A policy
    need not cut (the router cuts and reports the cut); it may use the bound to
    reason about the answer that will be served (hybrid gates on it).
    """

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


def claim_clauses(decision: Decision, text: str, catalog: Catalog,
                  served: list[str]) -> Decision:
    """The decision with every served tool placed in a clause, with that clause's condition.

    A clause-reading policy (lcr) says which clause chose each tool and the condition that
    gates it. The others (cdbv1-3, llm, the LLM's extra tools of hybrid) do not, and a gated
    action of theirs would run at once. Here a tool the policy did not place takes the
    clause its retrieval evidence came from, else the clause sharing most words with its
    name, keywords and summary (actions first); its condition follows the same rule as lcr's
    (an actuator chosen from a condition clause is gated by that condition). An actuator no
    clause claims, in a request with conditions, is gated by them: by the one, or by all of
    them joined (which the executor refuses), never by none.
    """
    missing = [t for t in served if t not in decision.clause_index and t in catalog]
    if not missing:
        return decision
    clauses = split_clauses(text)
    if not any(c.role == 'condition' for c in clauses):
        return decision
    gates = list(dict.fromkeys(c.condition or c.embedded for c in clauses
                               if c.condition or c.role == 'condition'))
    by_text = {c.text.lower(): c.index for c in clauses}
    words = [content_words(c.text) for c in clauses]
    clause_index, conditions = dict(decision.clause_index), dict(decision.conditions)
    for tool in missing:
        spec = catalog.by_name[tool]
        sensor = spec.kind is Kind.SENSOR
        # the clause whose text retrieved the tool best, else the one sharing most words
        score: dict[int, float] = {}
        for e in decision.evidence.get(tool, []):
            k = by_text.get(e.fragment.lower())
            if k is not None and e.source == 'retrieval':
                score[k] = max(score.get(k, -1.0), e.value)
        if not score:
            own = content_words(' '.join([spec.name.replace('_', ' '), spec.summary,
                                          *spec.keywords]))
            stems = {w.rstrip('s') for w in own}
            score = {k: float(n) for k, ws in enumerate(words)
                     if (n := len({w for w in ws if w in own or w.rstrip('s') in stems}))}
        best = max(score.values(), default=0.0)
        found = sorted((k for k, v in score.items() if v == best),  # ties: a gated action
                       key=lambda k: (clauses[k].role != 'action', not clauses[k].condition, k))
        if found and clauses[found[0]].role == 'condition':
            # read for the condition, but also asked for by an action it gates ("ndvi<0.3 ->
            # multispec shot"): that action
            found = [k for k in score if clauses[k].role == 'action' and clauses[k].condition] \
                or found
        if found:
            clause = clauses[found[0]]
            clause_index[tool] = clause.index
            condition = clause.condition if clause.role == 'action' else (
                '' if sensor else clause.embedded)
        else:
            condition = '' if sensor else ' and '.join(gates)
        if condition:
            conditions[tool] = condition
    return replace(decision, clause_index=clause_index, conditions=conditions)
