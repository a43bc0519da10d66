"""Drop the tools chosen for the clauses a rule says no catalog tool serves (pure).

The home of the mechanics the out-of-scope clause rules share: autopilot parameters
(routing/parameters.py) and switches to autopilot modes no tool serves
(routing/unserved_modes.py).
A rule names, per clause, why the clause is outside the catalog ('' when it is not); the tools
whose evidence came from those clauses go, the other clauses keep theirs ("set GUIDED and take
off to 10 m" is a take-off). A tool chosen for the whole request (no clause) goes only when the
request is one clause. Every drop is in the decision's note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from tool_router.common.clauses import Clause, split_clauses
from tool_router.routing.policies.base import Decision


@dataclass(frozen=True)
class ClauseDrop:
    """Tools dropped because their clause is outside the catalog, and why."""

    clause: str
    tools: tuple[str, ...]
    why: str = ''


def chosen_clause(decision: Decision, tool: str, text: str) -> Clause | None:
    """The clause of ``text`` that chose ``tool`` (None: not chosen, or from no clause).

    The rules that read the clause behind one tool (face_home, mission_stops, takeoff_height,
    vertical_moves, landing_places) look it up here, most through
    :func:`chosen_clause_matching`.
    """
    at = decision.clause_index.get(tool, -1)
    return next((c for c in split_clauses(text) if c.index == at), None)


def chosen_clause_matching(decision: Decision, tool: str, text: str, pattern: re.Pattern[str]
                           ) -> tuple[Clause, re.Match[str]] | None:
    """The clause that chose ``tool`` and ``pattern``'s match of it, when it is not negated.

    The clause's text is read without the spaces, full stops and exclamation marks around it.
    """
    clause = chosen_clause(decision, tool, text)
    if clause is None or clause.negated:
        return None
    m = pattern.match(clause.text.strip(' .!'))
    return (clause, m) if m is not None else None


def drop_clause_tools(decision: Decision, text: str, why_outside: Callable[[Clause], str],
                      clauses: Sequence[Clause] | None = None
                      ) -> tuple[Decision, list[ClauseDrop]]:
    """``decision`` without the tools chosen for the clauses ``why_outside`` names.

    ``clauses``: ``text``'s clauses when the caller has split them already.
    """
    clauses = split_clauses(text) if clauses is None else clauses
    about = {c.index: (c.text, why) for c in clauses if (why := why_outside(c))}
    if not about:
        return decision, []
    if len(clauses) <= 1:
        about[-1] = (text, next(iter(about.values()))[1])
    dropped: dict[int, list[str]] = {}
    for tool in decision.tools:
        at = decision.clause_index.get(tool, -1)
        if at in about:
            dropped.setdefault(at, []).append(tool)
    if not dropped:
        return decision, []
    gone = {t for tools in dropped.values() for t in tools}
    drops = [ClauseDrop(about[at][0], tuple(tools), about[at][1])
             for at, tools in sorted(dropped.items())]
    note = '; '.join(f'{", ".join(d.tools)} dropped: "{d.clause}" {d.why}' for d in drops)
    return decision.without(gone, note), drops
