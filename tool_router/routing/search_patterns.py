"""A named search pattern flown for a target is a mission and a detection, whatever the policy.

ANNOTATION.md: a named pattern ("grid", "spiral", "lawnmower", "expanding square", "sector",
"creeping line") is ``execute_mission``; finding something is ``object_detector``. Issue 27 saw
named search patterns with a target miss ``execute_mission`` on outside wording, and a writer of
the team's own (``benchmarks/data/v2/new_b31.jsonl``, writer pubw1) found both halves lost: "grid
search for a red backpack" got the detector alone (the vehicle would look but never fly the
pattern), "run a spiral search for the missing hiker" the mission alone (it would fly and never
look). The rule reads a named pattern followed in the same sentence by what it is for ("for a
/ the / any ...", "to find ...", "looking for ...") and adds what is missing of the two, gated
as the tool of the pair already chosen is gated. Not for a duration ("for 10 minutes"), not
into an empty answer, a question or a negated order. docs/CONVENTIONS.md, "Search patterns".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods

MISSION, DETECT = 'execute_mission', 'object_detector'
_PATTERN = (r'grid|spiral|lawn\s*-?\s*mower|expanding(?:[- ]square)?|sector|creeping[- ]line|'
            r'parallel[- ]track|zig[- ]?zag|ladder|box|square|boustrophedon|raster')
_OBJECT = (r'(?:a|an|the|any|some|our|my|his|her|their|missing|lost|stray|escaped|injured|'
           r'downed)\s+'
           # not a time ("for the next 10 minutes", "for a while") nor the pattern's own area
           r'(?!(?:next|first|last|rest|whole|while|bit|moment|few|couple|minute|hour|second|'
           r'time|area|field|region|zone|sector|block)\b)[a-z]')
SEARCH_FOR = re.compile(
    rf'\b(?P<pattern>(?:{_PATTERN})\s+(?:search|pattern|sweep|survey)(?:\s+pattern)?)\b'
    rf'[^.;!?]{{0,60}}?\b(?:for|to\s+(?:find|locate|spot|look\s+for)|looking\s+for|'
    rf'hunting\s+for|finding|locating)\s+(?P<object>{_OBJECT}[^.;!?,]{{0,40}})',
    re.IGNORECASE)


@dataclass(frozen=True)
class SearchAdded:
    """What the rule added for one named search pattern with a target."""

    order: str  # the words matched, as written
    tools: tuple[str, ...]


def add_search_pattern(decision: Decision, text: str, catalog: Catalog
                       ) -> tuple[Decision, SearchAdded | None]:
    """``decision`` with ``execute_mission`` and ``object_detector`` for "grid search for X"."""
    if not decision.tools or MISSION not in catalog or DETECT not in catalog:
        return decision, None
    missing = [t for t in (MISSION, DETECT) if t not in decision.tools]
    if not missing or len(missing) == 2:  # nothing to add, or neither half was read
        return decision, None
    m = SEARCH_FOR.search(text)
    if m is None:
        return decision, None
    said = m.group('pattern').lower()
    moods = clause_moods(text)
    at = next((cm for cm in moods if said.split()[0] in cm.clause.text.lower()), None)
    if at is None or at.mood.kind == QUESTION or at.clause.negated:
        return decision, None
    present = next(t for t in (MISSION, DETECT) if t in decision.tools)
    gate = decision.conditions.get(present, '')
    score = min(decision.aligned_scores())
    added = decision.with_rule_tool(missing[0], score, int(at.clause.index), m.group(0),
                                    f"search pattern for a target: {m.group('object').strip()}",
                                    gate)
    return added, SearchAdded(m.group(0), tuple(missing))
