"""Autopilot parameters are outside the catalog, whatever the policy (pure).

ANNOTATION.md: "Autopilot parameters (reading, listing or setting them: RTL altitude, disarm
delay, 'all battery parameters') ... -> ``out_of_scope``." The policies learned it where dev
writes it, but on requests of the team's own a parameter named next to a sensor's or a tool's
word took that tool: "show all battery parameters" got ``battery_status``, "what are the GPS
params" ``gps_position``, "read the compass parameters" ``compass_heading``, and "get param
LAND_SPEED" got ``land`` (an actuator, for a read of a number). The rule drops the tools chosen
for a clause that names a parameter ("parameter", "param", "params") or an autopilot parameter
id (capitals joined by underscores whose last part is a word: ``RTL_ALT``, ``WPNAV_SPEED``;
not "waypoint WP_3", a catalog tool's name in capitals, nor a flight mode's, ``SMART_RTL``,
``ALT_HOLD``: routing/flight_modes.py), and keeps the other clauses' tools ("take off and then
show me the battery parameters" is a take-off). A tool chosen for the whole request (no
clause) is dropped only when the request is one clause. Every drop is in the decision's note.
A clause that starts something "with the saved parameters" loses its tool too: no request of
dev's says it that way. docs/CONVENTIONS.md, "Autopilot parameters".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.routing.clause_drops import ClauseDrop, drop_clause_tools
from tool_router.routing.policies.base import Decision

PARAMETER_WORD = re.compile(r'\b(?:param|params|parameter|parameters)\b', re.IGNORECASE)
PARAMETER_ID = re.compile(r'(?<![\w-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w-])')
# ArduPilot's and PX4's mode names written with an underscore: a mode, not a parameter
MODE_IDS = frozenset({'smart_rtl', 'alt_hold', 'pos_hold', 'guided_nogps', 'auto_rtl',
                      'auto_land', 'auto_loiter', 'auto_mission', 'auto_takeoff', 'auto_tune',
                      'flow_hold', 'sys_id', 'turtle_mode'})


def names_parameter(text: str, catalog: Catalog) -> bool:
    """Whether ``text`` names an autopilot parameter (the word, or an id like ``RTL_ALT``)."""
    if PARAMETER_WORD.search(text):
        return True
    return any(_is_parameter_id(m.group(0), catalog) for m in PARAMETER_ID.finditer(text))


def _is_parameter_id(word: str, catalog: Catalog) -> bool:
    # a parameter's last part is a word (RTL_ALT, BATT_LOW_VOLT), not a number or a letter
    # ("waypoint WP_3", "gate B_2" name places)
    last = word.rsplit('_', 1)[-1]
    return (sum(ch.isalpha() for ch in last) >= 2 and word.lower() not in catalog
            and word.lower() not in MODE_IDS)


def drop_parameter_tools(decision: Decision, text: str, catalog: Catalog
                         ) -> tuple[Decision, list[ClauseDrop]]:
    """``decision`` without the tools chosen for clauses about autopilot parameters."""
    if not decision.tools or not names_parameter(text, catalog):
        return decision, []
    return drop_clause_tools(
        decision, text,
        lambda c: ('is about autopilot parameters, which no catalog tool reads or sets'
                   if names_parameter(c.text, catalog) else ''))
