"""Fleets and raw stick input are outside one vehicle's catalog, whatever the policy (pure).

ANNOTATION.md: "Outside a single vehicle's catalog -> ``out_of_scope``: fleet and multi-drone
requests (list the drones, send two drones) ... raw stick input". The policies learned it where
dev writes it ("send both drones to the quarry", "left stick full down"), but a writer of the
team's own in the public-projects style (``benchmarks/data/v2/new_b31.jsonl``, writer pubw1) got
tools for "land every drone in the fleet" (``land``), "have drone A follow drone B"
(``follow_target``), "show the fleet status", "yaw stick hard right" (``set_heading``) and "left
stick full up" (``goto_waypoint``): the words of the action outweighed the words that put the
request outside. The rule empties the answer of a request that names

* several vehicles or a fleet: "the fleet", "every / each / all (the / our) drones", "both
  drones", "two drones", or two vehicles by their ids ("drone A ... drone
  B", "drones 2 and 3"), or one picked out of a fleet ("the nearest free drone", "send the
  backup uav", pubw10); never inside a message the vehicle speaks or shows ("broadcast 'all
  drones must land'": quoted words are the message's) nor "drones" as a kind ("no drones
  allowed here" names no vehicle to act on: the rule looks for determiners that count
  vehicles; "the other drone is in the way, hold" is an order to this one, so "other" alone
  is no fleet);
* a stick of the transmitter with a position: "(left / right / pitch / roll / yaw / throttle)
  stick" and "full / hard / half / N % / up / down / forward / back / neutral / centre" (not
  "hands off the sticks" nor "stick with the pickup"), or the throttle at a percentage
  ("throttle 60%": a raw channel value, not a speed).

Every drop is in the decision's note. docs/CONVENTIONS.md, "Fleet requests stay out
of scope ... So does raw stick input".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.routing.policies.base import Decision

# "vehicle" and "aircraft" are also what a camera looks for ("detect every vehicle in both
# lots", writer pubw3): a fleet is counted in drones, or in vehicles by id only
_VEHICLE = r'(?:drones?|uavs?|quads?|copters?|quadcopters?)'
_VEHICLES = r'(?:drones|uavs|quads|copters|quadcopters)'
_BY_ID = r'(?:drones?|uavs?|quads?|copters?|quadcopters?|aircraft|vehicles?)'
FLEET = re.compile(
    r'\b(?:the|our|my|whole|entire|drone|uav)\s+fleet\b|'
    rf'\b(?:every|each)\s+(?:single\s+)?{_VEHICLE}\b|'
    rf'\ball\s+(?:(?:the|our|my|of\s+(?:the|our|my))\s+)?{_VEHICLES}\b|'
    rf'\b(?:both|two|three|four|several|multiple)\s+(?:of\s+(?:the|our|my)\s+)?{_VEHICLES}\b|'
    # one picked out of a fleet: "the nearest free drone", "the backup uav", "a spare quad"
    rf'\b(?:free|available|idle|spare|backup|unassigned|standby)\s+{_VEHICLE}\b|'
    rf'\b{_BY_ID}\s+(?:[a-z]|\d{{1,3}})\b[^.;!?]{{0,60}}?\b{_BY_ID}\s+(?:[a-z]|\d{{1,3}})\b|'
    rf'\b{_VEHICLES}\s+\d{{1,3}}\s*(?:,|and|&|to|-)\s*\d{{1,3}}\b',
    re.IGNORECASE)
STICK = re.compile(
    # "throttle 60%", "set throttle to 40 percent": the throttle channel by its position
    r'\b(?:set\s+(?:the\s+)?)?throttle\s+(?:to\s+|at\s+)?\d{1,3}\s*(?:%|percent\b)|'
    r'\b(?:left|right|pitch|roll|yaw|throttle|elevator|aileron|rudder)\s+stick\b'
    r'[^.;!?]{0,40}?\b(?:(?:full|fully|hard|half|halfway|max|maximum|min|minimum|up|down|'
    r'forward|forwards|back|backward|backwards|left|right|neutral|centre|center|centred|'
    r'centered)\b|\d{1,3}\s*(?:%|percent\b))',
    re.IGNORECASE)
# quoted words are a message's (speaker_broadcast), not the request's
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|\'[^\']{3,}\'')
# "move the drone a bit ... drone I": lower-case "a" and "i" after a vehicle word are words, not
# ids ("drone A" and "drone B" are)
_LETTER_WORDS = frozenset({'a', 'i'})


@dataclass(frozen=True)
class OutsideDrop:
    """Why the rule emptied the answer, and what it dropped."""

    reason: str
    words: str
    tools: tuple[str, ...]


def outside_one_vehicle(text: str) -> tuple[str, str] | None:
    """(why, the words) when ``text`` asks for a fleet or raw stick input; else None."""
    said = _QUOTED.sub(' ', text)
    for m in FLEET.finditer(said):
        words = m.group(0)
        ids = re.findall(rf'\b{_BY_ID}\s+([a-z]|\d{{1,3}})\b', words, re.IGNORECASE)
        if len(ids) >= 2 and (ids[0].lower() == ids[1].lower() or set(ids) & _LETTER_WORDS):
            continue  # the same vehicle twice, or "the drone a bit ..." (an article, lower case)
        return 'several vehicles or a fleet', words
    stick = STICK.search(said)
    if stick is not None:
        return 'raw stick input', stick.group(0)
    return None


def drop_outside_requests(decision: Decision, text: str, catalog: Catalog
                          ) -> tuple[Decision, OutsideDrop | None]:
    """``decision`` emptied when the request asks for a fleet or raw stick input."""
    if not decision.tools:
        return decision, None
    found = outside_one_vehicle(text)
    if found is None:
        return decision, None
    why, words = found
    drop = OutsideDrop(why, words, tuple(decision.tools))
    note = (f'{", ".join(drop.tools)} dropped: "{words}" asks for {why}, outside one '
            "vehicle's catalog")
    return decision.without(set(decision.tools), note), drop
