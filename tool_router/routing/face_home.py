""""Face home" turns the vehicle; it does not fly it home (pure).

An order to face, point or turn towards home names a heading: ``set_heading``
(ANNOTATION.md: a turn is ``set_heading``). lcr read the word "home": "fly 100 m north at 12 mph,
face home and take a photo" (pubw6) got ``return_to_home`` beside ``set_heading``, a flight home
in the middle of a survey. The rule drops ``return_to_home`` where the clause that chose it is
such a turn, and gives the clause ``set_heading`` when the policy chose none there. "come home",
"head home", "go home" and "turn around and come home" fly home: the rule reads only a clause
that is the turn alone. docs/CONVENTIONS.md, "Face home".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.routing.clause_drops import ClauseDrop, chosen_clause_matching
from tool_router.routing.policies.base import Decision

HOME = 'return_to_home'
HEADING = 'set_heading'
_FACE_HOME = re.compile(
    r'^(?:(?:please|pls|now|then|and)\s+)*(?:'
    # "face home", "point the nose towards home"
    r'(?:face|point|nose)\s+(?:(?:the\s+)?(?:nose|camera|drone|it)\s+)?'
    r'(?:(?:to|towards?|toward|at)\s+)?|'
    # "turn to face home", "yaw towards the launch point" ("turn back home" flies home)
    r'(?:turn|yaw|rotate)\s+(?:(?:the\s+)?(?:nose|camera|drone|it)\s+)?'
    r'(?:to\s+face|towards?|toward)\s+)'
    r'(?:the\s+)?(?:home(?:\s+point)?|launch(?:\s+point)?|takeoff\s+point)'
    r'(?:\s+(?:please|pls|now))?$', re.IGNORECASE)


def face_home_is_a_heading(decision: Decision, text: str, catalog: Catalog
                           ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` without ``return_to_home`` for a clause that only turns towards home."""
    if HOME not in decision.tools or not re.search(r'\b(?:face|point|turn|yaw|rotate|nose)\b',
                                                    text, re.IGNORECASE):
        return decision, None
    found = chosen_clause_matching(decision, HOME, text, _FACE_HOME)
    if found is None:
        return decision, None
    clause = found[0]
    kept = decision.with_tool_replaced(
        HOME, HEADING if HEADING in catalog else None, clause.index, clause.text,
        'a turn towards home', f'{HOME} dropped: "{clause.text}" turns towards home')
    return kept, ClauseDrop(clause.text, (HOME,), 'turns towards home')
