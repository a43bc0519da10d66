""""Fly until you see X" is a move and a detection, whatever the policy (pure).

ANNOTATION.md: "'Fly until you see X' / 'wander until you find X' -> ``goto_waypoint`` +
``object_detector`` (landmarks count as objects)." The policies learned it for the verbs dev
writes most ("fly", "wander"); on requests of the team's own they dropped the move for other
travel verbs and for a sighting written with its object first: "keep heading north until you
find a white van" and "go straight until a person shows up" got ``object_detector`` alone, so
the vehicle would look but never go. The rule reads an order whose travel verb is followed, in
the same sentence, by "until" / "till" and a sighting ("you see / spot / find / detect ...",
"a ... shows up / appears / comes into view"), and adds what is missing of the two tools: the
move for the clause with the verb, the detector for the sighting's clause, neither gated (the
move starts now; the sighting ends it). Not for verbs that stay in place (hover, hold, orbit,
follow), nor for searches ("search the field until you find the dog" names no way to go), nor
for a state ("until you see the battery drop"), a question or a negated order.
docs/CONVENTIONS.md, "Until you see".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_holding, clause_moods

MOVE, DETECT = 'goto_waypoint', 'object_detector'
_TRAVEL = (r'fly|flying|flies|go|going|goes|head|heading|heads|move|moving|wander|wandering|'
           r'cruise|cruising|travel|travell?ing|continue|continuing|proceed|proceeding|drift|'
           r'drifting|roam|roaming|advance|advancing|creep|creeping|push\s+on|press\s+on|'
           r'carry\s+on|keep\s+going|zip|scoot|edge|inch')
_STATE = (r'battery|altitude|height|signal|link|voltage|temperature|wind|speed|percent|%|'
          r'level|charge|mission|timer|clock|message|alert|warning|light\s+turn')
_SIGHTING = (
    r'(?:you|we|i|it|the\s+(?:drone|camera|vehicle))\s+(?:can\s+|do\s+|does\s+)?'
    r'(?:see|sees|spot|spots|find|finds|detect|detects|notice|notices|sight|sights|locate|'
    r'locates|catch\s+sight\s+of|catches\s+sight\s+of|come\s+across|comes\s+across|'
    r'come\s+upon|have\s+eyes\s+on|get\s+eyes\s+on|picks?\s+up)\b'
    rf'(?![^.;!?]{{0,30}}\b(?:{_STATE}))'
    r'|(?:a|an|the|some|any)\s+(?![^.;!?]{0,40}?\b(?:' + _STATE + r'))'
    r'[^.;!?]{1,40}?\b(?:shows?\s+up|turns?\s+up|appears?|pops?\s+up|comes?\s+into\s+'
    r'(?:view|sight)|is\s+(?:in\s+(?:view|sight)|visible|spotted|detected|seen))\b')
UNTIL_SEEN = re.compile(
    rf'\b(?P<move>{_TRAVEL})\b[^.;!?]{{0,80}}?\b(?:until|till|til|\'til|untill)\s+'
    rf'(?P<sight>{_SIGHTING})', re.IGNORECASE)


@dataclass(frozen=True)
class SightAdded:
    """What the rule added for one "until you see" order."""

    order: str  # the words matched, as written
    tools: tuple[str, ...]


def add_until_seen(decision: Decision, text: str, catalog: Catalog
                   ) -> tuple[Decision, SightAdded | None]:
    """``decision`` with ``goto_waypoint`` and ``object_detector`` for "go ... until you see X"."""
    if not decision.tools or MOVE not in catalog or DETECT not in catalog:
        return decision, None
    missing = [t for t in (MOVE, DETECT) if t not in decision.tools]
    if not missing:
        return decision, None
    m = UNTIL_SEEN.search(text)
    if m is None:
        return decision, None
    moods = clause_moods(text)
    move = clause_holding(moods, m.group('move'))
    if move is not None and (move.mood.kind == QUESTION or move.clause.negated):
        return decision, None
    move_at = int(move.clause.index) if move is not None else -1
    sight = re.sub(r'^(?:you|we|i|it)\s+', '', m.group('sight'), flags=re.IGNORECASE)
    sight_at = next((int(cm.clause.index) for cm in moods
                     if cm.clause.role == 'condition'
                     and cm.clause.text.lower() in m.group(0).lower()), move_at)
    score = min(decision.aligned_scores())
    added = decision
    for tool in missing:  # neither gated: the move starts now, the sighting ends it
        added = added.with_rule_tool(tool, score, move_at if tool == MOVE else sight_at,
                                     m.group(0), f'until seen: {sight}')
    return added, SightAdded(m.group(0), tuple(missing))
