"""A switch to an autopilot mode that no catalog tool serves selects nothing (pure).

ANNOTATION.md maps the flight modes that perform a catalog function (LOITER / HOLD / POSHOLD /
BRAKE -> ``hold_position``, RTL -> ``return_to_home``, LAND -> ``land``, AUTO ->
``execute_mission``; routing/flight_modes.py rewrites those switches) and puts every other
mode out of scope. lcr leaves the others "for the scope decision to reject", and on requests in
the public-projects style of the team's own (``benchmarks/data/v2/new_b32.jsonl``, writer pubw2)
it did not: "ALT_HOLD please" got ``altitude_sensor``, "switch to ALTCTL" ``set_altitude``,
"manual mode pls" ``vehicle_state``, "go SPORT" ``video_recorder``. The rule drops, for every
policy, the tools chosen for a clause that switches to such a mode (GUIDED, ACRO, STABILIZE,
ALT_HOLD, SPORT, DRIFT, MANUAL, OFFBOARD, ALTCTL, ...: ``flight_modes.UNMAPPED``), and keeps
the other clauses' ("set GUIDED and take off to 10 m" is a take-off). A question about the mode
("are we in GUIDED?") is a state question and keeps its sensor. docs/CONVENTIONS.md, "A switch
to an autopilot mode no tool serves selects nothing".
"""
from __future__ import annotations

from tool_router.common.clauses import Clause, split_clauses
from tool_router.routing.clause_drops import ClauseDrop, drop_clause_tools
from tool_router.routing.flight_modes import unmapped_mode_switch
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods


def drop_unserved_modes(decision: Decision, text: str) -> tuple[Decision, list[ClauseDrop]]:
    """``decision`` without the tools chosen for switches to modes no catalog tool serves."""
    if not decision.tools or not unmapped_mode_switch(text):
        return decision, []
    clauses = split_clauses(text)
    asked = {cm.clause.index for cm in clause_moods(text, clauses) if cm.mood.kind == QUESTION}

    def why(clause: Clause) -> str:
        name = '' if clause.index in asked else unmapped_mode_switch(clause.text)
        return f'switches to the autopilot mode {name}, which no catalog tool serves' if name \
            else ''

    return drop_clause_tools(decision, text, why, clauses)
