"""Add a tool for the order clause that names its parameter (pure).

The counterpart of :mod:`tool_router.routing.clause_drops`: the rules that add a setter for a
parameter an order names (an explicit speed: routing/speeds.py; a move's height:
routing/move_heights.py) read the same clauses and add the same way. An order clause is an
action clause that is no steering, no negation, no question ("are we flying at 10 m/s?") and
carries no message ("announce that we fly at 5 m/s"); the tool added takes the best score of
the tools chosen from that clause (the request's lowest when none was) and is gated as that
clause is ("if the battery drops below 30%, come home at 8 m/s" changes the speed when the
return starts, not now).
"""
from __future__ import annotations

import re
from typing import Iterator

from tool_router.common.clauses import Clause
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods

# a clause that carries a message names a parameter for someone to hear, not one to fly at
# ("announce on the speaker that we fly at 5 m/s")
MESSAGE = re.compile(r'\b(?:announce|tell|broadcast|say|says|said|shout|warn|notify|inform|'
                     r'message|radio|report|play|read\s+out)\b', re.IGNORECASE)


def order_clauses(text: str) -> Iterator[Clause]:
    """The clauses of ``text`` that order something (now or on a condition), in order."""
    for cm in clause_moods(text):
        c = cm.clause
        if not (c.role != 'action' or c.steering or c.negated or cm.mood.kind == QUESTION
                or MESSAGE.search(c.text)):
            yield c


def with_clause_tool(decision: Decision, tool: str, clause: Clause, why: str) -> Decision:
    """``decision`` with ``tool`` added for ``clause``, scored and gated as that clause is."""
    scores = decision.aligned_scores()
    own = [s for t, s in zip(decision.tools, scores)
           if decision.clause_index.get(t) == clause.index]
    gate = next((decision.conditions[t] for t in decision.tools
                 if decision.clause_index.get(t) == clause.index and decision.conditions.get(t)),
                clause.condition)
    return decision.with_rule_tool(tool, max(own) if own else min(scores), clause.index,
                                   clause.text, why, gate)
