"""A move straight up or down is an altitude change, not a flight to a place (pure).

ANNOTATION.md: a climb or descent by a distance ("go up 3 m", "come down 2 m") is
``set_altitude``; ``goto_waypoint`` is a move across. Dev writes every clause that moves only up
or down so (41 clauses of v2 dev, old dev and pubw10: ``set_altitude``, and ``goto_waypoint``
only for another clause of the request). lcr sometimes read the verb "move" and gave the
clause both ("Move up 1 meter": ``set_altitude`` + ``goto_waypoint``). The rule drops
``goto_waypoint`` when the clause that chose it is a vertical move alone ("move / go / fly /
head / climb / drop / descend / come up | down | higher | lower [by] N unit") and
``set_altitude`` answers the same clause; a move with a direction across ("go up 2 m and
forward 3", one clause), a destination ("fly up to the roof") or a negated clause is left alone.
docs/CONVENTIONS.md, "A move straight up or down".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.routing.clause_drops import ClauseDrop, chosen_clause_matching
from tool_router.routing.policies.base import Decision

GOTO = 'goto_waypoint'
ALTITUDE = 'set_altitude'
_VERTICAL = re.compile(
    r'^(?:(?:and|then|please|now)\s+)*(?:move|go|fly|head|climb|drop|descend|rise|ascend|come|'
    r'get)\s+(?:straight\s+)?(?:up|down|higher|lower)\s+(?:by\s+)?(?:another\s+|about\s+)?'
    r'\d+(?:\.\d+)?\s*(?:m|cm|ft|meters?|metres?|feet|foot)\b(?:\s+(?:please|now))?$',
    re.IGNORECASE)


def vertical_move_is_altitude(decision: Decision, text: str, catalog: Catalog
                              ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` without ``goto_waypoint`` for a clause that only moves up or down."""
    if GOTO not in decision.tools or ALTITUDE not in decision.tools:
        return decision, None
    if decision.clause_index.get(ALTITUDE, -2) != decision.clause_index.get(GOTO, -1):
        return decision, None
    found = chosen_clause_matching(decision, GOTO, text, _VERTICAL)
    if found is None:
        return decision, None
    clause = found[0]
    kept = decision.without({GOTO}, f'{GOTO} dropped: "{clause.text}" moves only up or down '
                                    f'({ALTITUDE})')
    return kept, ClauseDrop(clause.text, (GOTO,), 'a move straight up or down')
