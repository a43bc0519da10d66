"""A picture of what is behind the vehicle turns it first (pure).

ANNOTATION.md: "A photo away from the nose ('a picture of what is behind you') adds
``set_heading``." The camera looks where the nose points; lcr learned the phrase the team wrote
("photo of what's behind you") but not the operators' ("pic of whatever's behind us", "take a
pic of the road behind us": pubw4, pubw5), which got the camera alone. The rule reads the clause
that chose a camera (a still, a thermal or multispectral image, a video) and adds
``set_heading`` when that clause places its subject behind the vehicle ("behind us", "behind
you", "behind the drone", "at our six"); "the tower is behind us" with no camera, or "behind
the barn" (a place, not the vehicle's rear), adds nothing. The heading gets the camera's score,
clause and condition. docs/CONVENTIONS.md, "A picture behind the vehicle".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tool_router.common.catalog import Catalog
from tool_router.common.clauses import split_clauses
from tool_router.routing.policies.base import Decision

SET_HEADING = 'set_heading'
CAMERAS = ('rgb_camera', 'thermal_camera', 'multispectral_camera', 'video_recorder')
BEHIND = re.compile(
    r"\bbehind\s+(?:us|you|the\s+(?:drone|aircraft|vehicle|quad|uav|copter))\b|"
    r"\b(?:at|on|check)\s+(?:our|your)\s+six\b", re.IGNORECASE)


@dataclass(frozen=True)
class RearView:
    """The clause that asked for a picture behind the vehicle, and its camera."""

    clause: str
    camera: str


def add_rear_view_turn(decision: Decision, text: str, catalog: Catalog
                       ) -> tuple[Decision, RearView | None]:
    """``decision`` with ``set_heading`` when a camera's clause looks behind the vehicle."""
    if SET_HEADING in decision.tools or SET_HEADING not in catalog or not BEHIND.search(text):
        return decision, None
    clauses = {c.index: c for c in split_clauses(text)}
    scores = dict(zip(decision.tools, decision.aligned_scores()))
    for camera in (t for t in decision.tools if t in CAMERAS):
        at = decision.clause_index.get(camera, -1)
        clause = clauses.get(at) or (clauses.get(0) if len(clauses) == 1 else None)
        if clause is None or clause.negated or not BEHIND.search(clause.text):
            continue
        match = BEHIND.search(clause.text)
        assert match is not None
        added = decision.with_rule_tool(
            SET_HEADING, scores[camera], clause.index, match.group(0),
            f'a picture behind the vehicle: the nose turns for {camera}',
            decision.conditions.get(camera, ''))
        return added, RearView(clause.text, camera)
    return decision, None
