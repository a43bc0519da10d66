"""An order told to people over the speaker is the message's, not the vehicle's (pure).

Dev annotates "tell <people> to <order>" as ``speaker_broadcast`` alone: "get over to the island
and tell the campers to stay put", "tell the crowd to clear the road", "light them up and tell them
to stay where they are" (28 such clauses of the read dev files, none annotated with a tool for the
told order; a hold said in a clause of its own keeps its tool). lcr read the told order too and
added its tool ("lights on and tell them to stay put": ``hold_position`` beside the speaker,
pubw14, read at stop 50): the vehicle would have stopped where it was told people to; "broadcast
stay there" likewise. The rule drops every tool other than ``speaker_broadcast`` that was chosen
from a clause that tells people to do something, when the answer has the speaker to tell them with.
"tell the drone to land" is an order to the vehicle (the splitter strips that opening: clauses.py),
and so is "hover and tell them to stay put" (two clauses: the hover is its own).
docs/CONVENTIONS.md, "An order told to people".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.common.clauses import split_clauses
from tool_router.routing.clause_drops import ClauseDrop
from tool_router.routing.policies.base import Decision

SPEAKER = 'speaker_broadcast'
_TOLD = re.compile(
    r"^(?:(?:please|now|then|and|also|just)\s+)*(?:tell|ask|order|warn|instruct|shout\s+at|"
    r"yell\s+at)\s+(?!(?:the\s+|my\s+|our\s+)?(?:drone|uav|quad|quadcopter|copter|aircraft|"
    r"vehicle|it|yourself)\b)"
    r"(?P<who>(?:them|him|her|everyone|everybody|anyone|anybody|people|folks|whoever[\w ]*?|"
    r"(?:the|those|these|any|all)\s+[\w' -]{1,30}?|[a-z]+s))\s+(?:to|not\s+to)\s+\w|"
    # the order said as the message itself: "broadcast stay there", "announce: clear the area"
    r"^(?:(?:please|now|then|and|also|just)\s+)*(?:broadcast|announce|say|shout|yell)\s*[:\"']?"
    r"\s*(?:(?:everyone|everybody|people|folks),?\s+)?(?:please\s+)?(?:stay|land|leave|move|"
    r"clear|go|get|keep|wait|stop|back|come|evacuate|hold|remain|don'?t)\b",
    re.IGNORECASE)


def told_orders_are_the_message(decision: Decision, text: str, catalog: Catalog
                                ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` without the tools of a told order, when the speaker tells it."""
    if SPEAKER not in decision.tools or len(decision.tools) < 2 \
            or not re.search(r'\b(?:tell|ask|order|warn|instruct|shout|yell|broadcast|announce|'
                             r'say)\b', text, re.IGNORECASE):
        return decision, None
    for clause in split_clauses(text):
        if clause.role != 'action' or clause.negated \
                or not _TOLD.match(clause.text.strip(' .!')):
            continue
        told = tuple(t for t in decision.tools if t != SPEAKER
                     and decision.clause_index.get(t, -1) == clause.index)
        if told:
            kept = decision.without(set(told), f'{", ".join(told)} dropped: "{clause.text}" '
                                                f'is told to people ({SPEAKER})')
            return kept, ClauseDrop(clause.text, told, 'an order told to people')
    return decision, None
