""""Kill the floodlight" switches a payload off; it never stops the motors (pure).

An operator who says "kill" or "cut" of a light, a sound or a recording means to switch it off.
lcr read the verb: "kill the floodlight and land on the dock" (writer pubw4) got
``emergency_stop`` beside ``spotlight``, and "kill the music" got ``emergency_stop`` alone: a
motor cut in flight for a light or a song. The rule drops ``emergency_stop`` where the clause
that chose it opens with kill / cut / shut off / shut down of such a payload, and gives the
clause the payload's own tool when the policy chose none (a light's ``spotlight``, a sound's
``speaker_broadcast``, a recording's ``video_recorder``). "kill the motors", "kill it", "cut the
engines" and "kill switch" stay emergency stops: the object is the vehicle's or none.
"cut speed" slows down: "should the esc get hotter than 90, cut speed and come home" (pubw6) got
``emergency_stop`` where it asked for ``set_speed``. docs/CONVENTIONS.md, "Kill the floodlight".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.common.clauses import split_clauses
from tool_router.routing.payload_nouns import LIGHT, SOUND, TOOL, VIDEO
from tool_router.routing.policies.base import Decision

STOP = 'emergency_stop'
KILL = re.compile(
    r'^(?:please\s+)?(?:kill|cut|shut\s+off|shut\s+down|switch\s+off|turn\s+off)\s+'
    r'(?:the\s+|that\s+|those\s+|this\s+|these\s+|your\s+|our\s+|its\s+)?(?:[\w-]+\s+)?'
    rf'(?:(?P<light>{LIGHT})|(?P<sound>{SOUND})|(?P<video>{VIDEO})|(?P<speed>speed|pace))\b',
    re.IGNORECASE)
# the tool each object of the verb is switched by: a payload's, or the speed's
_TOOL = {**TOOL, 'speed': 'set_speed'}


@dataclass(frozen=True)
class PayloadKill:
    """One clause that switches a payload off, and the tool it was given."""

    clause: str
    payload: str  # the payload's tool (kept or added)


def payload_kills(decision: Decision, text: str, catalog: Catalog
                  ) -> tuple[Decision, PayloadKill | None]:
    """``decision`` without ``emergency_stop`` for "kill the floodlight", the light's tool in."""
    if STOP not in decision.tools or not re.search(r'\b(?:kill|cut|off|down)\b', text, re.I):
        return decision, None
    clauses = split_clauses(text)
    at = decision.clause_index.get(STOP, -1)
    clause = next((c for c in clauses if c.index == at), clauses[0] if len(clauses) == 1 else None)
    m = KILL.match(clause.text.strip()) if clause is not None else None
    if clause is None or m is None or clause.negated:
        return decision, None
    kind = next(k for k in _TOOL if m.group(k))
    payload = _TOOL[kind]
    kept = decision.with_tool_replaced(
        STOP, payload if payload in catalog else None, clause.index, m.group(0),
        f'cut: {m.group(kind)}', f'{STOP} dropped: "{m.group(0)}" is no motor cut')
    return kept, PayloadKill(clause.text, payload)
