"""A height to fly a move at adds ``set_altitude``, whatever the policy (pure).

ANNOTATION.md settles a speed in a move ("fly east at 3 m/s" adds ``set_speed``); dev settles its
height the same way: a flight to a place or a mission flown at a height ("go to 34.05, -118.25 at
100 ft and snap a pic", "fly the grid at 60 m", "fly the perimeter at 30 m and record", "head to
120,45 at 50 m") is the move and ``set_altitude``, and so is an orbit whose number is said to be a
height ("orbit Tower2 at 15 m height", "orbit Tower2 25 m up": every clause of the read dev files
the rule reads, 11 of 11). lcr gave the move alone (6 of pubw14's, the writer read at stop 50). An
orbit "at 15 m" is its radius ("orbit the Silo at 30 m": ``orbit_point`` alone, 58 of 59 dev
requests; the 59th climbs in a clause of its own), "follow the car at 10 m" its distance, "take off
to 30 m" the takeoff's own height, and "at 12 m east" a place, so those add nothing. The rule reads
what the clause splitter left of an order (a condition is a clause of its own: "once at 100 ft,
hover" names a height to wait for), never a question nor a message, and adds ``set_altitude`` with
the score of the best tool chosen from that clause, gated as its clause is. docs/CONVENTIONS.md, "A
move's height".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.common.clauses import normalise
from tool_router.common.numbers import digits
from tool_router.routing.policies.base import Decision
from tool_router.routing.clause_adds import order_clauses, with_clause_tool

SET_ALTITUDE = 'set_altitude'
# the moves whose "at N m" is the height they fly at
_FLOWN_AT = frozenset(('goto_waypoint', 'execute_mission'))
# the moves whose number is a height only when it is said to be one (an orbit's "at 15 m" is
# its radius, a follow's its distance)
_SAID_HEIGHT = frozenset(('goto_waypoint', 'execute_mission', 'orbit_point', 'follow_target',
                          'area_mapping'))
_LENGTH = r'(?P<n>\d+(?:\.\d+)?)\s*(?P<u>m|ft|meters?|metres?|feet|foot)\b(?!\s*/|\s*per\b)'
# "at 50 m altitude", "at a height of 40 m", "25 m up", "15 m AGL", "30 m above the ground"
_WORDED = (re.compile(rf'\b(?:at\s+)?(?:an?\s+)?(?:altitude|height)\s+(?:of\s+)?{_LENGTH}',
                      re.IGNORECASE),
           re.compile(rf'\b{_LENGTH}\s+(?:altitude|height|agl|up|high|above\s+(?:the\s+)?'
                      r'(?:ground(?:\s+level)?|launch|take-?off|home)(?:\s+point)?)\b',
                      re.IGNORECASE))
# "at 60 m" after the move's verb, not a place nor a distance ("at 12 m east", "at 20 m from
# the mast", "at 10 m radius", "at 5 m intervals")
_AT = re.compile(
    rf'(?<=\S)\s+(?:at|@)\s*{_LENGTH}(?!\s*(?:radius|away|from|of|off|out|behind|ahead|in\s+front|'
    r'apart|east|west|north|south|left|right|forward|back|distance|spacing|intervals?|wide|long|'
    r'across|circle|ring|loop|legs?|lanes?|rows?|spacing|overlap|to\s+the))', re.IGNORECASE)


_ANY_LENGTH = re.compile(r'\d\s*(?:m|ft|meters?|metres?|feet|foot)\b', re.IGNORECASE)


@dataclass(frozen=True)
class HeightAdded:
    """``set_altitude`` added for the clause that names a height to fly a move at."""

    clause: str
    height: str  # as written after digits(): "60 m"


def move_height(text: str, moves: frozenset[str] | set[str]) -> str:
    """The height an order's text names to fly its ``moves`` at ('' when none): "60 m"."""
    said = digits(text)
    found = [p.search(said) for p in _WORDED] if moves & _SAID_HEIGHT else []
    if moves & _FLOWN_AT:
        found.append(_AT.search(said))
    m = next((f for f in found if f), None)
    return f'{m.group("n")} {m.group("u")}' if m else ''


def add_move_heights(decision: Decision, text: str, catalog: Catalog
                     ) -> tuple[Decision, HeightAdded | None]:
    """``decision`` with ``set_altitude`` added when a move names the height it flies at."""
    if SET_ALTITUDE in decision.tools or SET_ALTITUDE not in catalog or not decision.tools \
            or not _ANY_LENGTH.search(digits(normalise(text))):  # no length: no clause to read
        return decision, None
    for c in order_clauses(text):
        own = {t for t in decision.tools if decision.clause_index.get(t) == c.index}
        # a takeoff's height is the takeoff's ("take off to 30 m": ANNOTATION.md)
        height = move_height(c.text, own) if own & _SAID_HEIGHT and 'takeoff' not in own else ''
        if height:
            added = with_clause_tool(decision, SET_ALTITUDE, c, f'height of the move: {height}')
            return added, HeightAdded(c.text, height)
    return decision, None
