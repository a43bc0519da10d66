"""A flight to a place named like a landing spot is a flight, not a landing (pure).

"fly to Dock and snap a picture" and "fly_to('Dock')" (pubw10, v2 dev) got
``precision_landing``: lcr read the place's name, and a dock or a pad is where precision
landings end. ANNOTATION.md gives a flight to a place ``goto_waypoint``; a landing is asked
for with its own words. The rule replaces ``precision_landing`` by ``goto_waypoint`` (its score
and gate) when the clause that chose it moves the vehicle to a place ("fly / go / goto / head /
move / navigate / proceed / travel / return to ...") and says nothing of landing anywhere in
the request ("land", "touch down", "set / put it down", "precland", "dock" as a verb, "end
up", "go down on the mark"). Dev: every request with ``precision_landing`` in its truth has
such words (12 of 12), and the rule changes only the two above. A clause that chose both
landings keeps the one scored higher (:func:`one_landing`). docs/CONVENTIONS.md, "A flight to
a place named like a landing spot".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.routing.clause_drops import ClauseDrop, chosen_clause, chosen_clause_matching
from tool_router.routing.policies.base import Decision

PRECISION = 'precision_landing'
GOTO = 'goto_waypoint'
_FLIGHT = re.compile(r'^(?:(?:please|now|then|and)\s+)*(?:fly|go|goto|go_to|fly_to|head|move|'
                     r'navigate|proceed|travel|cruise|transit)\b(?:\s*\(|\s+(?:over\s+|back\s+)?'
                     r'(?:to|towards?|toward)?\b)', re.IGNORECASE)
# a landing in any words, anywhere in the request (the clause's place may be "Dock": "dock" as
# a verb is "dock at", "dock on", "dock it", "docking")
_LANDING = re.compile(
    r'\b(?:land\w*|lnad\w*|precland|prec\s*land|touch\s*down|touchdown|set\s+(?:it\s+|her\s+)?'
    r'down|put\s+(?:it\s+|her\s+|my\s+drone\s+|the\s+drone\s+)?down|go\s+down\s+(?:on|onto)|'
    r'end\s+up|settle|perch|docking|docked|dock\s+(?:at|on|it|her|the\s+drone))\b',
    re.IGNORECASE)


def flight_to_a_landing_place(decision: Decision, text: str, catalog: Catalog
                              ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` with ``goto_waypoint`` for a ``precision_landing`` that is a flight."""
    if PRECISION not in decision.tools or _LANDING.search(text):
        return decision, None
    found = chosen_clause_matching(decision, PRECISION, text, _FLIGHT)
    if found is None:
        return decision, None
    clause = found[0]
    kept = decision.with_tool_replaced(
        PRECISION, GOTO if GOTO in catalog else None, clause.index, clause.text,
        'a flight to a place', f'{PRECISION} dropped: "{clause.text}" flies to a place and no '
                               'landing is asked for')
    return kept, ClauseDrop(clause.text, (PRECISION,), 'a flight to a place')


LAND = 'land'
_PRECISE = re.compile(r'\b(?:precision|precise|precisely|precland|prec\s*land|exactly|'
                      r'on\s+the\s+(?:marker|mark|tag|apriltag|h))\b', re.IGNORECASE)


def one_landing(decision: Decision, text: str, catalog: Catalog
                ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` with one landing where a clause chose both ``land`` and the precise one.

    A vehicle lands once: no dev request is annotated with both (0 of 8,479), and lcr gave both
    to "Fly to the rooftop pad, land on it" (``land`` at 0.45 beside ``precision_landing`` at
    0.93) and to "lnad it on the gravel pad" (``land`` 0.96, the precise one 0.77). When the two
    answer the same clause, the one the clause names stays ("precision land", "precland", "on
    the marker": the precise one; the dev condition case "within 5m of the launch point ->
    precision land" scored ``land`` higher), else the one the policy scored higher.
    """
    if LAND not in decision.tools or PRECISION not in decision.tools:
        return decision, None
    if decision.clause_index.get(LAND, -1) != decision.clause_index.get(PRECISION, -2):
        return decision, None
    scores = dict(zip(decision.tools, decision.aligned_scores()))
    clause = chosen_clause(decision, LAND, text)
    words = clause.text if clause is not None else text
    if _PRECISE.search(words):  # "-> precision land": the request names which landing
        gone, why = LAND, 'the request asks for the precise one'
    else:
        gone = LAND if scores[LAND] < scores[PRECISION] else PRECISION
        why = f'the policy scored {LAND if gone == PRECISION else PRECISION} higher'
    kept = decision.without({gone}, f'{gone} dropped: "{words}" is one landing, and {why}')
    return kept, ClauseDrop(words, (gone,), 'one landing')
