"""An arrival at a place is a position condition, whatever the policy (pure).

docs/CONVENTIONS.md, "Arrival at a named place is a position condition": "when you reach the
gate, take a photo" -> ``gps_position`` + ``rgb_camera``. Dev writes it that way, and the
policies learned it for "reach"; on requests of the team's own they left the condition without
its sensor for other verbs ("when you get to the gate drop the package", "once at the car
park hover") or took another tool for it (``object_detector`` for "on arrival at the barn",
``precision_landing`` for "when we reach the dock"). The rule reads each condition clause that
is an arrival at a place ("you get to / reach / arrive at / are at / are over the X", "arrival
at the X", "at the X"; the place "the" and a noun, or a name written as one: "GateC",
"Depot_4") and adds ``gps_position`` for that clause when the answer has none. Never in a
request that asks ("how long before it reaches the gate" is a question), never for a number
(an altitude, "waypoint 5", coordinates: the parser reads those itself and dev annotates them
their own way), a state ("when you reach full charge"), or an empty answer; it adds, it
removes nothing. The executor reads the arrival from the condition's text either
way (a known place, or a clear refusal: tool_router/executor/conditions.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from tool_router.common.catalog import Catalog
from tool_router.common.conditions import WAYPOINT
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods

POSITION = 'gps_position'
ARRIVAL = re.compile(
    r"^(?:(?:you|we|it|u|the\s+(?:drone|vehicle|quad|aircraft))\s*"
    r"(?:'re|are|r|is|'s|get|gets|got|reach|reaches|arrive|arrives|make\s+it)\s+"
    r"(?:(?:at|to|over|above|in|into|on)\s+)?|arrival\s+(?:at|in|over)\s+|at\s+|over\s+)"
    # "the gate", "the car park"; or a name written as one ("GateC", "Depot_4", "Building4")
    r"(?P<place>the\s+[a-z][\w' -]{1,40}|(?-i:[A-Z][a-z]*[A-Z0-9_][\w-]*)|"
    # a noun and a letter that names it ("pad C", "gate B", "Dock A")
    r"(?!(?:at|to|over|above|into|on)\s)[a-z]{3,}\s+(?-i:[A-Z]))$",
    re.IGNORECASE)
# what is not a place: states, quantities and the vehicle's own progress
_NOT_A_PLACE = re.compile(
    r"\b\d|\b(?:charge|battery|percent|altitude|height|speed|end|limit|edge|ceiling|top|bottom|"
    r"waypoint|wp|mission|survey|patrol|route|leg|point\s+of|level|minimum|maximum|max|min|"
    r"same|start|beginning|halfway|half|middle|ground|floor|water|surface|air|sky|dirt|grass|"
    r"clouds?)\b", re.IGNORECASE)


# a cheap look before the clauses are split (most requests have no arrival)
_CUE = re.compile(r"\b(?:reach\w*|gets?\s+to|got\s+to|arriv\w*|at|over|above|make\s+it)\b",
                  re.IGNORECASE)
_CONDITION_WORD = re.compile(r"\b(?:when|whenever|once|soon|if|upon|on\s+arrival)\b",
                             re.IGNORECASE)


@dataclass(frozen=True)
class ArrivalAdded:
    """``gps_position`` added for a condition clause that is an arrival at a place."""

    clause: str
    place: str


def arrival_place(condition: str) -> str:
    """The place a condition clause arrives at ('' when it is no arrival at a place)."""
    m = ARRIVAL.match(condition.strip().rstrip('.,;!'))
    if m is None or _NOT_A_PLACE.search(m.group('place')):
        return ''
    return m.group('place')


def add_arrival_sensor(decision: Decision, text: str, catalog: Catalog
                       ) -> tuple[Decision, ArrivalAdded | None]:
    """``decision`` with ``gps_position`` for a condition that is an arrival at a place."""
    if not _CUE.search(text) or not _CONDITION_WORD.search(text):
        return decision, None
    return _add_for_condition(decision, text, catalog, POSITION, arrival_place, 'arrival at {}')


STATE = 'vehicle_state'


def _waypoint(condition: str) -> str:
    m = WAYPOINT.search(condition)
    return m.group(0) if m else ''


def add_waypoint_progress(decision: Decision, text: str, catalog: Catalog
                          ) -> tuple[Decision, ArrivalAdded | None]:
    """``decision`` with ``vehicle_state`` for a condition on a mission's waypoint.

    "at waypoint 4 lower the winch", "when we hit waypoint 5, take a photo": mission progress,
    which ANNOTATION.md gives ``vehicle_state`` (dev writes it so); lcr left it out on pubw7
    and pubw8. The executor watches it as ``vehicle_state.waypoint`` (the mission's items
    reached), so the order waits for that item rather than runs at once.
    """
    if not WAYPOINT.search(text):
        return decision, None
    return _add_for_condition(decision, text, catalog, STATE, _waypoint,
                              'a waypoint of the mission: its progress')


def _add_for_condition(decision: Decision, text: str, catalog: Catalog, tool: str,
                       place_of: Callable[[str], str], detail: str
                       ) -> tuple[Decision, ArrivalAdded | None]:
    """``decision`` with ``tool`` for the first condition clause ``place_of`` finds a place in.

    Never in a request that asks, for a negated condition, into an empty answer, or when the
    answer has ``tool`` already; the tool takes the answer's lowest score.
    """
    if not decision.tools or tool in decision.tools or tool not in catalog:
        return decision, None
    moods = clause_moods(text)
    if any(cm.mood.kind == QUESTION for cm in moods):  # "how long before it reaches the gate"
        return decision, None
    for cm in moods:
        c = cm.clause
        place = place_of(c.text) if c.role == 'condition' and not c.negated else ''
        if place:
            added = decision.with_rule_tool(tool, min(decision.aligned_scores()), c.index,
                                            c.text, detail.format(place))
            return added, ArrivalAdded(c.text, place)
    return decision, None
