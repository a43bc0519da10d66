""""Check the battery before takeoff": the takeoff is when, not what (pure).

Dev annotates a check made before the flight as the readings alone: "check battery and signal
before I take off" -> ``battery_status`` + ``link_quality``, "before we fly, what's the battery
%" -> ``battery_status`` (ANNOTATION.md rule 1: only what the request asks for). lcr took the
time for an order: "check the battery, the signal and any errors before takeoff" (v2 dev) and
"check battery, GPS and link before takeoff" (pubw6) got ``takeoff`` beside the readings, a
take-off the operator never asked for. The rule drops the tools chosen from a clause opened by
"before" that names only the vehicle's departure ("takeoff", "we launch", "you take off", "the
flight", "we fly", "arming") when every other tool of the answer is a sensor. "arm the motors
before takeoff" keeps its take-off (an order beside it), and a departure that is ordered ("take
off before the rain") is no "before" clause. docs/CONVENTIONS.md, "Checks before takeoff".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog, Kind
from tool_router.common.clauses import Clause, split_clauses
from tool_router.routing.clause_drops import ClauseDrop, drop_clause_tools
from tool_router.routing.policies.base import Decision

_DEPARTURE = re.compile(
    r"^(?:(?:we|i|you|it|the\s+drone|u)\s+(?:can\s+|could\s+|do\s+)?)?(?:take\s*-?\s*off|"
    r"takeoff|takes\s+off|launch|launches|lift\s*-?\s*off|lifts\s+off|fly|flying|go\s+up|"
    r"(?:the\s+|this\s+|our\s+|each\s+|every\s+)?(?:flight|launch|take\s*-?\s*off|takeoff|"
    r"mission)|"
    # the arming too: "check health, sats and geofence before arming" (pubw7)
    r"arming|arm|arms|arm\s+(?:it|the\s+(?:motors|drone))|arming\s+(?:it|the\s+(?:motors|drone)))$",
    re.IGNORECASE)


def drop_preflight_departure(decision: Decision, text: str, catalog: Catalog
                             ) -> tuple[Decision, list[ClauseDrop]]:
    """``decision`` without the take-off read from "... before takeoff" beside readings only."""
    if not decision.tools or not re.search(r'\bbefore\b', text, re.IGNORECASE):
        return decision, []
    clauses = split_clauses(text)
    departures = {c.index for c in clauses
                  if c.marker == 'before' and _DEPARTURE.match(c.text.strip(' .!?,'))}
    if not departures:
        return decision, []
    sensors = {t.name for t in catalog if t.kind is Kind.SENSOR}
    others = [t for t in decision.tools if decision.clause_index.get(t, -1) not in departures]
    if not others or any(t not in sensors for t in others):
        return decision, []

    def departure(clause: Clause) -> str:
        return 'is the time of the checks, not an order' if clause.index in departures else ''

    return drop_clause_tools(decision, text, departure, clauses)
