""""Stop the mission" holds the vehicle; it does not run a mission (pure).

ANNOTATION.md and dev write a paused or stopped mission as ``hold_position`` ("pause the
mission" -> ``hold_position``; "abort the patrol and RTL" -> ``return_to_home``), and
``execute_mission`` only where a mission is started or resumed. lcr read the word "mission":
"stop mission go home disarm" (pubw6) and "pause mission" got ``execute_mission``. The rule drops
``execute_mission`` where the clause that chose it stops, pauses, halts, aborts or cancels the
mission (survey, patrol, route), and gives a stop or a pause ``hold_position`` when the policy
chose none (an abort or a cancel is followed by what comes next: "abort and RTL"). Nothing when
any clause starts, resumes or continues a mission ("pause the survey, then resume it"), or when
the clause is negated. docs/CONVENTIONS.md, "Stop the mission".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.routing.clause_drops import ClauseDrop, chosen_clause_matching
from tool_router.routing.policies.base import Decision

MISSION = 'execute_mission'
HOLD = 'hold_position'
_STOP = re.compile(
    r'^(?:(?:please|pls|now|then|and|just)\s+)*(?P<verb>stop|pause|halt|freeze|abort|cancel|'
    r'end|kill)\s+(?:the\s+|this\s+|that\s+|our\s+|your\s+|current\s+)*(?:[\w-]+\s+)?'
    r'(?:mission|survey|patrol|route|flight\s+plan|auto\s+mission)'
    r'(?:\s+(?:now|please|pls|for\s+a\s+(?:sec|second|moment|bit)))?$', re.IGNORECASE)
_GOES_ON = re.compile(r'\b(?:resume|resumes|resuming|continue|continues|carry\s+on|restart|'
                      r'start|begin|run|go\s+on|pick\s+up)\b', re.IGNORECASE)
_HOLDS = frozenset({'stop', 'pause', 'halt', 'freeze'})


def mission_stop_is_a_hold(decision: Decision, text: str, catalog: Catalog
                           ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` without ``execute_mission`` for a clause that stops the mission."""
    if MISSION not in decision.tools or _GOES_ON.search(text):
        return decision, None
    found = chosen_clause_matching(decision, MISSION, text, _STOP)
    if found is None:
        return decision, None
    clause, m = found
    holds = m.group('verb').lower() in _HOLDS and HOLD in catalog
    kept = decision.with_tool_replaced(
        MISSION, HOLD if holds else None, clause.index, clause.text,
        'the mission stopped: the vehicle holds',
        f'{MISSION} dropped: "{clause.text}" stops the mission')
    return kept, ClauseDrop(clause.text, (MISSION,), 'stops the mission')
