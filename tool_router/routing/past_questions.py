"""A question about what the vehicle did when something happened reads no sensor for the event.

"did the failsafe RTH fire when we lost the link", "did the auto land kick in when the battery
hit 15%", "did mapping stop when the link dropped?": the operator asks what the vehicle did,
which ``vehicle_state`` answers; the loss of the link or the battery's level is the time of the
question, past, neither asked about nor watched. Dev writes them ``vehicle_state`` alone (9 of
9 such questions of the read question files); lcr added the event's sensor in 7
(``link_quality``, ``battery_status``: the clause splitter reads "when we lost the link" as a
condition clause, whose sensor a condition is given). The rule reads a request whose question
asks about the past ("did ...", "was ...", "had ...") and drops the sensors chosen from its
other asking clauses that tell of a past event ("we lost the link", "the signal dropped", "the
battery warning came up"), when ``vehicle_state`` answers the question. A condition on what is
to come ("did we take off? if the battery is low, land") is no past event, and an order keeps
its condition. docs/CONVENTIONS.md, "A question about what the vehicle did".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog, Kind
from tool_router.routing.clause_drops import ClauseDrop
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods

STATE = 'vehicle_state'
PAST_QUESTION = re.compile(r"^(?:so\s+|and\s+|but\s+)?(?:did|was|were|had)\b", re.IGNORECASE)
# an event told in the past: "we lost the link", "the battery hit 15%", "the warning came up"
PAST_EVENT = re.compile(r'\b(?:lost|losing|dropped|dropping|came\s+up|hit|died|failed|went|'
                        r'cut\s+out|got|fell|triggered|fired|ran\s+out|warned|was|were)\b',
                        re.IGNORECASE)


def drop_past_event_sensors(decision: Decision, text: str, catalog: Catalog
                            ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` without the sensors of a past event a question about the past names."""
    if STATE not in decision.tools or len(decision.tools) < 2 \
            or not re.search(r'\b(?:did|was|were|had)\b', text, re.IGNORECASE):
        return decision, None
    moods = [cm for cm in clause_moods(text) if cm.mood.kind == QUESTION]
    if not any(PAST_QUESTION.match(cm.clause.text) for cm in moods):
        return decision, None
    for cm in moods:
        c = cm.clause
        if PAST_QUESTION.match(c.text) or not PAST_EVENT.search(c.text):
            continue
        told = tuple(t for t in decision.tools if t != STATE and t in catalog
                     and catalog.get(t).kind is Kind.SENSOR
                     and decision.clause_index.get(t) == c.index)
        if told:
            kept = decision.without(set(told), f'{", ".join(told)} dropped: "{c.text}" is a '
                                               f'past event the question names')
            return kept, ClauseDrop(c.text, told, 'a past event the question names')
    return decision, None
