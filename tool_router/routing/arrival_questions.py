"""An arrival asked about is read where the vehicle is, not in its state (pure).

Dev answers a question whether the vehicle has got somewhere with the sensor that reads where it
is: a place ("are we at the gate already?", "has it reached the waypoint?", "did it get to the
pump house yet", "waypoint reached?") is ``gps_position``, a height ("did it reach 50 metres?",
"is it at 50 m yet", "did we reach the new height?") ``altitude_sensor`` (the read dev files: 19
of 19 such questions), while home ("has it made it home", "did it make it back home yet": the
return's end) and "which waypoint are we at" (the mission's progress) are ``vehicle_state``'s.
lcr answered 13 of the place and height questions with ``vehicle_state`` (the read question
files). The rule reads each clause that asks (the mood of routing/questions.py) whether the
vehicle is at, has reached, arrived at or got to something that is no home, and puts the
position's or the height's sensor in place of the ``vehicle_state`` chosen from that clause.
Never into an answer without ``vehicle_state`` there, never for a negated clause, a level ("are
we at 50% battery?") or a state. docs/CONVENTIONS.md, "An arrival asked about".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods

STATE, POSITION, ALTITUDE = 'vehicle_state', 'gps_position', 'altitude_sensor'
_WHO = r"(?:we|it|she|he|the\s+(?:drone|uav|quad|vehicle|aircraft))"
ASKED = re.compile(
    rf"^(?:so\s+|and\s+)?(?:(?:are|is|was|were)\s+{_WHO}\s+(?:at|over|above|near)\s+|"
    rf"(?:did|has|have|had)\s+{_WHO}\s+(?:\w+\s+)?(?:reach(?:ed)?|arrived?\s+at|arrived?\s+in|"
    r"get\s+to|got\s+to|made?\s+it\s+to|finish(?:ed)?\s+climbing\s+to|climb(?:ed)?\s+to)\s*|"
    r"(?:the\s+)?(?:waypoint|wp|destination|target(?:\s+point)?|goto\s+point)\s+reached\b\s*)"
    r"(?P<what>.*?)\s*(?:yet|already|now|ok|at\s+last)?\s*[?.!]*$", re.IGNORECASE)
_HEIGHT = re.compile(r'\d\s*(?:m|ft|metres?|meters?|feet|foot)\b|\b(?:height|altitude)\b',
                     re.IGNORECASE)
_HOME = re.compile(r'\b(?:home|base|launch|takeoff|take-off|start)\b', re.IGNORECASE)
# a level or a state, no place: "are we at 50% battery", "is it at full charge", "in loiter"
_NOT_A_PLACE = re.compile(r'%|\b(?:percent|battery|charge|speed|mode|loiter|hold|full|max|'
                          r'maximum|minimum|limit|rest|risk|work)\b', re.IGNORECASE)


@dataclass(frozen=True)
class ArrivalAsked:
    """The clause that asks about an arrival, and the sensor put in for ``vehicle_state``."""

    clause: str
    sensor: str


def arrival_asked(clause: str) -> str:
    """The sensor that answers whether the vehicle got where ``clause`` asks ('' if none)."""
    m = ASKED.match(clause.strip())
    if m is None:
        return ''
    what = m.group('what')
    if _HEIGHT.search(what):
        return ALTITUDE
    if _HOME.search(what) or _NOT_A_PLACE.search(what):
        return ''
    return POSITION


def answer_arrival_questions(decision: Decision, text: str, catalog: Catalog
                             ) -> tuple[Decision, ArrivalAsked | None]:
    """``decision`` with the position's or height's sensor for an arrival asked about."""
    if STATE not in decision.tools or not re.search(r'\b(?:at|over|above|near|reach\w*|arriv\w*|'
                                                    r'get|got|made|climb\w*)\b', text,
                                                    re.IGNORECASE):
        return decision, None
    for cm in clause_moods(text):
        c = cm.clause
        if cm.mood.kind != QUESTION or c.negated or decision.clause_index.get(STATE) != c.index:
            continue
        sensor = arrival_asked(c.text)
        if not sensor or sensor not in catalog:
            continue
        kept = decision.with_tool_replaced(
            STATE, sensor, c.index, c.text, 'an arrival asked about',
            f'{STATE} dropped: "{c.text}" asks where the vehicle is ({sensor})')
        return kept, ArrivalAsked(c.text, sensor)
    return decision, None
