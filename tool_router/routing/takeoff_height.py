"""A climb joined to a takeoff by "and" is the takeoff's height (pure).

ANNOTATION.md: "A target height given with a takeoff is part of ``takeoff``; ``set_altitude`` is
for a vehicle already in the air." Dev writes "lift off and climb to 40 metres" and "take off and
go up to 2 meters, then spin around" as ``takeoff`` alone, and "take off, climb to 120 ft, face
west" or a numbered "1) take off 2) climb to 40 m" with ``set_altitude`` (a step of its own,
after the takeoff's). lcr gave the climb its own ``set_altitude`` in both shapes (pubw10: "lift
off and climb to twenty meters", "take off and climb to 30m then go forward 50m then land").
The rule drops ``set_altitude`` when the clause that chose it is a climb to a height that follows
a takeoff word and "and" directly ("take off and climb to 30 m", "launch and then go up to 2
m"); a climb after a comma or a step number, a takeoff with a height of its own ("take off to
20 m and climb to 40 m") and a negated clause are left alone. docs/CONVENTIONS.md, "A climb
joined to a takeoff".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.common.numbers import SPELLED
from tool_router.routing.clause_drops import ClauseDrop, chosen_clause_matching
from tool_router.routing.policies.base import Decision

TAKEOFF = 'takeoff'
ALTITUDE = 'set_altitude'
_CLIMB = (r'(?:climb|go\s+up|ascend|rise|get\s+up|head\s+up)\s+(?:to\s+)?'
          r'(?:about\s+|around\s+|roughly\s+|approx(?:imately)?\s+)?'
          rf'(?:\d+(?:\.\d+)?|{SPELLED})\s*(?:m|ft|meters?|metres?|feet)\b')
_JOINED = re.compile(r'\b(?:take\s*-?\s*off|takeoff|lift\s*-?\s*off|launch)\s+and\s+(?:then\s+)?'
                     + _CLIMB, re.IGNORECASE)
_CLIMB_CLAUSE = re.compile(rf'^(?:and\s+)?(?:then\s+)?{_CLIMB}\s*$', re.IGNORECASE)


def climb_is_the_takeoff_height(decision: Decision, text: str, catalog: Catalog
                                ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` without ``set_altitude`` for a climb joined to its takeoff by "and"."""
    if TAKEOFF not in decision.tools or ALTITUDE not in decision.tools \
            or not _JOINED.search(text):
        return decision, None
    found = chosen_clause_matching(decision, ALTITUDE, text, _CLIMB_CLAUSE)
    if found is None:
        return decision, None
    clause = found[0]
    kept = decision.without({ALTITUDE}, f'{ALTITUDE} dropped: "{clause.text}" is the height of '
                                        'the takeoff it is joined to')
    return kept, ClauseDrop(clause.text, (ALTITUDE,), 'the height of the takeoff')
