"""An explicit speed in an order adds ``set_speed``, whatever the policy (pure).

ANNOTATION.md: "An explicit speed in a move ('fly east at 3 m/s') adds ``set_speed``;
'slowly' adds nothing." The policies learned it for the unit dev writes most (m/s with a
plain move); measured on requests of the team's own, they missed it for km/h, kph, mph, knots
and "metres per second", and for moves other than ``goto_waypoint`` ("orbit the tower at 2
m/s", "follow the car at 10 m/s", "head home at 8 m/s"). The rule reads what the clause
splitter left of an order (its condition is a clause of its own, so "if the wind exceeds 30
km/h, land" names no speed to fly at), never a clause that asks about a state ("are we flying
at 10 m/s?": routing/questions.py) nor one that carries a message ("announce that we fly at
5 m/s"), and adds ``set_speed`` with the score of the best tool chosen from that clause and
that clause's condition ("if the battery drops below 30%, come home at 8 m/s": the speed
changes when the return does). docs/CONVENTIONS.md, "Explicit speeds".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.common.numbers import digits
from tool_router.routing.policies.base import Decision
from tool_router.common.clauses import normalise
from tool_router.routing.clause_adds import order_clauses, with_clause_tool

SET_SPEED = 'set_speed'
_UNIT = (r'(?:m/s|mps|km/h|km/hr|kph|kmh|kmph|knots?|kts?|kn|mph|'
         r'(?:metres?|meters?)\s+(?:per|a|an|1)\s+second|'
         r'(?:kilometres?|kilometers?)\s+(?:per|an|a|1)\s+hour|miles?\s+(?:per|an|a|1)\s+hour)')
# (digits() reads "an hour" as "1 hour")
# "at 36 km/h", "@ 5 m/s", "at a speed of 8 knots", "with a speed of 3 m/s", "speed 20 kph"
EXPLICIT_SPEED = re.compile(
    r'(?:\b(?:at|@)|@|\bwith|\bspeed|\bpace|\bvelocity)\s*(?:a\s+|an\s+)?'
    r'(?:(?:ground\s*)?(?:speed|pace|velocity)\s+(?:of\s+)?)?'
    r'(?:about\s+|around\s+|roughly\s+|approximately\s+|approx\.?\s+|~\s*)?'
    rf'(?P<n>\d+(?:[.,]\d+)?)\s*(?P<u>{_UNIT})(?![\w/])', re.IGNORECASE)


@dataclass(frozen=True)
class SpeedAdded:
    """``set_speed`` added for the clause that names a speed to fly at."""

    clause: str
    speed: str  # as written after digits(): "36 km/h"


# a speed standing alone after a comma at the clause's end: "orbit the tower at 30 m radius,
# 3 m/s, recording" (pubw7); not "22 m/s ground speed", a reading
_ANY_SPEED = re.compile(rf'\d\s*{_UNIT}(?![\w/])', re.IGNORECASE)
TRAILING_SPEED = re.compile(rf',\s*(?P<n>\d+(?:[.,]\d+)?)\s*(?P<u>{_UNIT})\s*$', re.IGNORECASE)


def explicit_speed(text: str) -> str:
    """The speed an order's text names to fly at ('' when none): "36 km/h"."""
    said = digits(text)
    m = EXPLICIT_SPEED.search(said) or TRAILING_SPEED.search(said)
    return f'{m.group("n")} {m.group("u")}' if m else ''


def add_explicit_speeds(decision: Decision, text: str, catalog: Catalog
                        ) -> tuple[Decision, SpeedAdded | None]:
    """``decision`` with ``set_speed`` added when an order names a speed and it lacks it."""
    if SET_SPEED in decision.tools or SET_SPEED not in catalog or not decision.tools \
            or not _ANY_SPEED.search(digits(normalise(text))):  # no speed: no clause to read
        return decision, None
    for c in order_clauses(text):
        speed = explicit_speed(c.text)
        if speed:
            added = with_clause_tool(decision, SET_SPEED, c, f'explicit speed: {speed}')
            return added, SpeedAdded(c.text, speed)
    return decision, None
