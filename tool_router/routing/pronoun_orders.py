""""Is the light on? If not, turn it on": the order's "it" is what the question asked (pure).

ANNOTATION.md: a question about a state is answered by the sensor that reads it, and an order
beside it still acts ("what's the battery and then land"). When the order names its object only
by a pronoun, "turn it on", "switch them off", the policies read the clause alone and find no
tool in it: on the thirteenth refit's model "is the light on? if not, turn it on" got
``vehicle_state`` and no ``spotlight`` (benchmarks/data/questions/dev_questions.jsonl). The rule
reads an order that turns "it / them / that" on or off, takes the nearest question before it
(all of its clauses), and when that question names exactly one of the payloads that are
switched on and off (the light, the recording, the loudspeaker, the mapping) adds that
payload's actuator for the order's clause. Nothing when the policy already chose it, when the
order is negated or is itself a question, when no question comes before it ("turn it on"
alone names nothing), or when the question names none or two of them. docs/CONVENTIONS.md,
"An order's 'it'".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.routing.payload_nouns import LIGHT, SOUND, TOOL, VIDEO
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods

# The payloads that are switched on and off, by the words a question names them with
ON_OFF: dict[str, re.Pattern[str]] = {
    **{TOOL[kind]: re.compile(rf'\b(?:{words})\b', re.I)
       for kind, words in (('light', LIGHT), ('video', VIDEO), ('sound', SOUND))},
    'area_mapping': re.compile(r'\b(?:mapping|mapper)\b', re.I),
}
# "turn it on", "switch them back off", "turn on that", "put it on"
_IT_ORDER = re.compile(
    r'^(?:(?:please|pls|then|and|so|just|ok|okay)\s+)*(?:'
    r'(?:turn|switch|put|flip|start|stop|kill)\s+(?:it|them|that|this)\s+(?:back\s+)?(?:on|off)|'
    r'(?:turn|switch|flip)\s+(?:back\s+)?(?:on|off)\s+(?:it|them|that|this))'
    r'(?:\s+(?:again|now|please|pls|then))*$', re.I)
# The same verb and pronoun anywhere in the request's words: without them no clause can be such
# an order, and the clauses' moods (about 0.2 ms) are not read
_ANY_IT_ORDER = re.compile(
    r"\b(?:turn|switch|put|flip|start|stop|kill)\s+(?:back\s+)?(?:(?:on|off)\s+)?"
    r"(?:it|them|that|this)\b")


def _letters(text: str) -> str:
    """``text``'s words of letters, lower case, one space apart."""
    return ' '.join(re.findall(r"[a-z']+", text.lower()))


@dataclass(frozen=True)
class PronounResolved:
    """What the rule added: the order as written, the payload's actuator, the question."""

    order: str
    tool: str
    question: str


def add_pronoun_orders(decision: Decision, text: str, catalog: Catalog
                       ) -> tuple[Decision, PronounResolved | None]:
    """``decision`` with the payload a question named for a later "turn it on / off"."""
    if not decision.tools or not _ANY_IT_ORDER.search(_letters(text)):
        return decision, None
    moods = clause_moods(text)
    for k, cm in enumerate(moods):
        if cm.clause.role != 'action' or cm.clause.negated or cm.mood.kind == QUESTION \
                or not _IT_ORDER.match(_letters(cm.written)):
            continue
        last = next((j for j in range(k - 1, -1, -1) if moods[j].mood.kind == QUESTION), None)
        if last is None:
            continue
        first = last  # the question's clauses: "are the lights | and the recording on?"
        while first > 0 and moods[first - 1].mood.kind == QUESTION:
            first -= 1
        question = ' '.join(q.clause.text for q in moods[first:last + 1])
        named = [t for t, words in ON_OFF.items() if words.search(question)]
        if len(named) != 1 or named[0] not in catalog or named[0] in decision.tools:
            continue
        tool = named[0]
        added = decision.with_rule_tool(
            tool, min(decision.aligned_scores()), int(cm.clause.index), cm.clause.text,
            f"'it' is what the question named ('{question}')")
        return added, PronounResolved(cm.clause.text, tool, question)
    return decision, None
