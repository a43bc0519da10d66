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
into an empty answer, a question or a negated order. docs/CONVENTIONS.md, "A named search
pattern flown for a target is a mission and a detection" (and the named shape after it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tool_router.common.catalog import Catalog
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_holding, clause_moods

MISSION, DETECT = 'execute_mission', 'object_detector'
_PATTERN = (r'grid|spiral|lawn\s*-?\s*mower|expanding(?:[- ]square)?|sector|creeping[- ]line|'
            r'parallel[- ]track|zig[- ]?zag|ladder|box|square|boustrophedon|raster')
_OBJECT = (r'(?:a|an|the|any|some|our|my|his|her|their|missing|lost|stray|escaped|injured|'
           r'downed)\s+'
           # not a time ("for the next 10 minutes", "for a while") nor the pattern's own area
           r'(?!(?:next|first|last|rest|whole|while|bit|moment|few|couple|minute|hour|second|'
           r'time|area|field|region|zone|sector|block)\b)[a-z]')
# a bare plural after "for" is a target too ("grid search for survivors"), not a span of time
_PLURAL = (r'(?!(?:minutes|hours|seconds|mins|hrs|secs|days|ages|weeks|years|laps|passes|'
           r'rounds|loops|times)\b)[a-z]{3,}s\b')
SEARCH_FOR = re.compile(
    rf'\b(?P<pattern>(?:{_PATTERN})\s+(?:search|pattern|sweep|survey)(?:\s+pattern)?|'
    # the pattern as the verb: "zigzag the field looking for the dog", "spiral over the forest
    # counting deer" (pubw6)
    r'(?:zig[- ]?zag|spiral|lawn\s*-?\s*mower)(?=\s+(?:over|across|through|along|above|the)\b))'
    rf'\b[^.;!?]{{0,60}}?\b(?:for|to\s+(?:find|locate|spot|look\s+for|count)|looking\s+for|'
    rf'hunting\s+for|searching\s+for|finding|locating|counting)\s+'
    rf'(?P<object>(?:{_OBJECT}|{_PLURAL}|(?<=counting\s)[a-z]{{3,}})[^.;!?,]{{0,40}})',
    re.IGNORECASE)
# The named shapes (ANNOTATION.md: a shape named but not spelled out leg by leg is a mission)
_SHAPES = (r'star|heart|square|triangle|rectangle|pentagon|hexagon|octagon|diamond|'
           r'figure[- ]?(?:8|eight)|zig[- ]?zag|lawn\s*-?\s*mower')
# A named shape flown around something ("box pattern around Silo2", "triangle around the three
# towers"): the shape, a mission (ANNOTATION.md), not an orbit of the thing it goes around
SHAPE_AROUND = re.compile(
    rf'\b(?P<shape>{_SHAPES}|triangular|rectangular|box|grid|spiral)'
    r'(?:\s+(?:pattern|shape|loop|route|path|circuit|lap))?\s+(?:\w+\s+)?around\b',
    re.IGNORECASE)
ORBIT = 'orbit_point'
_CIRCLING = re.compile(r'\b(?:orbit|orbits|orbiting|circle|circles|circling|loiter\s+around)\b',
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
    if not missing:
        return decision, None
    m = SEARCH_FOR.search(text)
    if m is None:
        return decision, None
    said = m.group('pattern').lower()
    moods = clause_moods(text)
    at = clause_holding(moods, said.split()[0])
    if at is None or at.mood.kind == QUESTION or at.clause.negated:
        return decision, None
    # gated as the half already chosen is; with neither ("thermal grid search for survivors"
    # got thermal_camera alone), as the pattern's clause is
    present = next((t for t in (MISSION, DETECT) if t in decision.tools), '')
    gate = decision.conditions.get(present, '') if present else at.clause.condition
    score = min(decision.aligned_scores())
    added = decision
    for tool in missing:
        added = added.with_rule_tool(tool, score, int(at.clause.index), m.group(0),
                                     f"search pattern for a target: {m.group('object').strip()}",
                                     gate)
    return added, SearchAdded(m.group(0), tuple(missing))


def shape_around_is_a_mission(decision: Decision, text: str, catalog: Catalog
                              ) -> tuple[Decision, SearchAdded | None]:
    """``decision`` with ``execute_mission`` for ``orbit_point`` on "box pattern around X".

    Only where the clause that chose the orbit names the shape before "around" and says no
    circling of its own ("orbit the square", "circle around the box" stay orbits), and the
    clause is no question.
    """
    if ORBIT not in decision.tools or MISSION in decision.tools or MISSION not in catalog:
        return decision, None
    m = SHAPE_AROUND.search(text)
    if m is None:
        return decision, None
    moods = clause_moods(text)
    at = clause_holding(moods, m.group(0))
    if at is None or at.mood.kind == QUESTION or at.clause.negated \
            or _CIRCLING.search(at.clause.text) \
            or decision.clause_index.get(ORBIT, at.clause.index) != at.clause.index:
        return decision, None
    k = decision.tools.index(ORBIT)
    score = decision.aligned_scores()[k]
    gate = decision.conditions.get(ORBIT, '')
    # the mission takes the orbit's place: the answer never goes empty on the way
    kept = replace(decision.without({ORBIT}), abstained=decision.abstained)
    added = kept.with_rule_tool(MISSION, score, int(at.clause.index), m.group(0),
                                f"a named shape flown around something: {m.group('shape')}",
                                gate)
    return added, SearchAdded(m.group(0), (MISSION,))


# A named shape or a tour ordered flown ("fly a star shape", "do a 20 m hexagon over the lot",
# "give me a tour of the campus"): a mission (ANNOTATION.md), not a move to one point or an orbit
SHAPE_FLOWN = re.compile(
    r'^(?:fly|do|run|trace|draw|perform|execute)\s+(?:(?:a|an|the|one|another)\s+)?'
    r'(?:\d+(?:\.\d+)?\s*-?\s*(?:m|metres?|meters?|ft|feet)\s+)?'
    r'(?:(?:big|small|large|little|tight|wide|quick|slow)\s+)?'
    rf'(?P<shape>{_SHAPES})(?:\s+(?:shape|shaped|pattern|path|route|loop|circuit))?'
    r'(?=\s*$|\s*,|\s+(?:over|around|above|across|at|of|with|in|on|for|then|and|\d))'
    # a bare shape as a step of a plan ("climb 10 m, figure eight, land")
    rf'|^(?:an?\s+)?(?P<bare>{_SHAPES})(?:\s+(?:shape|pattern|path|route|loop|circuit))?$'
    r'|^(?:give|show)\s+(?:me|us|them|the\s+\w+)\s+(?:a|the)\s+(?:\w+\s+)?(?P<tour>tour)\s+'
    r'(?:of|around|over)\b|^(?:take\s+(?:me|us)\s+on|do|fly|run|start)\s+(?:a|the)\s+'
    r'(?:\w+\s+)?(?P<tour2>tour)\b',
    re.IGNORECASE)
_LEGS = frozenset({'goto_waypoint', ORBIT})


def named_shape_is_a_mission(decision: Decision, text: str, catalog: Catalog
                             ) -> tuple[Decision, SearchAdded | None]:
    """``decision`` with ``execute_mission`` for an order to fly a named shape or a tour.

    The order opens its clause (after "please", "make the drone" ...), is no question and is not
    negated. A move to one point or an orbit chosen for that clause gives way to the mission,
    whether the policy chose the mission too or the rule adds it; an empty answer gets the
    mission (a shape ordered flown is for the vehicle whatever the scope decision read: "make the
    drone fly a star shape" was vetoed at p_in_scope 0.39), scored as the policy scored it.
    """
    if MISSION not in catalog or not re.search(rf'\b(?:{_SHAPES}|tour)\b', text, re.IGNORECASE):
        return decision, None
    found = next(((cm, m) for cm in clause_moods(text) if cm.clause.role == 'action'
                  and (m := SHAPE_FLOWN.match(cm.clause.text.strip()))), None)
    if found is None or found[0].mood.kind == QUESTION or found[0].clause.negated:
        return decision, None
    at, m = found
    k = int(at.clause.index)
    legs = [t for t in decision.tools if t in _LEGS and decision.clause_index.get(t, k) == k]
    if MISSION in decision.tools:
        if not legs or decision.clause_index.get(MISSION, k) != k:
            return decision, None
        # the policy chose the mission and a leg of it: the shape is flown, no one point
        return (decision.without(set(legs), f'{", ".join(legs)} dropped: a named shape is flown '
                                 f'("{m.group(0)}"), no one point'), SearchAdded(m.group(0), ()))
    scores = dict(zip(decision.tools, decision.aligned_scores()))
    candidates = dict(decision.candidates)
    score = max([scores[t] for t in legs] or [candidates.get(MISSION, 0.0)])
    gate = next((decision.conditions[t] for t in legs if t in decision.conditions),
                at.clause.condition)
    kept = replace(decision.without(set(legs)), abstained=False)
    shape = m.group('shape') or m.group('bare') or 'tour'
    added = kept.with_rule_tool(MISSION, score, k, m.group(0), f'a named shape flown: {shape}',
                                gate)
    return added, SearchAdded(m.group(0), (MISSION,))
