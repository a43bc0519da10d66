"""A question about the present flight mode is answered by ``vehicle_state`` (pure).

"are we in loiter" (pubw5) got ``geofence_monitor`` (the encoder read "in" as inside an area)
and "am I in return mode right now?" nothing (the scope decision, p_in_scope 0.38). ANNOTATION
.md: the flight mode is ``vehicle_state``'s. The rule reads each clause with
:func:`tool_router.routing.flight_modes.mode_question`; for a clause that asks whether the
vehicle is in a mode it puts ``vehicle_state`` in (with the best score the policy gave it, or
the clause's best) and drops the other tools chosen from that clause alone (an actuator there
is dropped by the question rule anyway). Other clauses keep their tools ("is it in LOITER? then
switch to LAND" keeps ``land``). docs/CONVENTIONS.md, "Mode questions".
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from tool_router.common.catalog import Catalog
from tool_router.common.clauses import split_clauses
from tool_router.routing.flight_modes import mode_question
from tool_router.routing.policies.base import Decision

STATE = 'vehicle_state'


@dataclass(frozen=True)
class ModeQuestion:
    """The clause that asks about the mode, and what the rule took out of it."""

    clause: str
    mode: str
    dropped: tuple[str, ...]


def answer_mode_questions(decision: Decision, text: str, catalog: Catalog
                          ) -> tuple[Decision, ModeQuestion | None]:
    """``decision`` with ``vehicle_state`` answering a question about the flight mode."""
    if STATE not in catalog or not mode_question(text):
        return decision, None
    clauses = split_clauses(text)
    for clause in clauses:
        mode = mode_question(clause.text)
        if not mode or clause.negated:
            continue
        own = [t for t in decision.tools if t != STATE and (
            decision.clause_index.get(t) == clause.index
            or (len(clauses) == 1 and decision.clause_index.get(t, -1) in (-1, 0)))]
        scores = dict(zip(decision.tools, decision.aligned_scores()))
        best = max([scores[t] for t in own], default=dict(decision.candidates).get(STATE, 0.5))
        kept = decision.without(set(own), f'{", ".join(own)} dropped: "{clause.text}" asks '
                                          f'about the flight mode') if own else decision
        if STATE not in kept.tools:
            kept = kept.with_rule_tool(STATE, best, clause.index, mode,
                                       f'a question about the flight mode: {mode}')
        return replace(kept, abstained=False), ModeQuestion(clause.text, mode, tuple(own))
    return decision, None
