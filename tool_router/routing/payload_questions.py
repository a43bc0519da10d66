"""A question about the gimbal's pointing or the winch's line is ``vehicle_state``'s (pure).

ANNOTATION.md: "a question about a state is answered by the sensor that reads it"; dev writes
every question about the gimbal's or the camera's pointing, tilt or lock as ``vehicle_state``
(which reports payload status: 37 of the 38 such questions in scope of the read dev files; the
38th, "the gimbal is already tilted ..., so are there any errors?", asks for errors), and every
question about the winch, its hook, line, cable or tether too (67 of 67 in scope). lcr read the
vehicle's own pose into some: "what's the gimbal pitch right now", "is the gimbal level" got
``attitude_imu`` (the airframe's pitch), "where is the camera pointing" ``gps_position``, "which
way is the camera looking" ``compass_heading`` (15 of the read question files' answers), "how
far down is the hook?" ``altitude_sensor``, "winch position" ``gps_position``, "is the cable
still paying out?" ``link_quality`` (4). The rule reads each clause that asks (the mood of
routing/questions.py) and names the gimbal or the camera with a word of its pointing, or the
winch's line, and not the vehicle's own pose ("how high are we with the winch out?"); it drops
the pose and link sensors chosen from that clause and puts ``vehicle_state`` there with the
best score they had. Never into an empty answer ("what's the best gimbal for mapping" is out of
scope), never for a negated clause, and an order ("tilt the gimbal down", "lower the hook") is
no question. docs/CONVENTIONS.md, "State questions about payloads".
"""
from __future__ import annotations

import re

from tool_router.common.catalog import Catalog
from tool_router.routing.clause_drops import ClauseDrop
from tool_router.routing.policies.base import Decision
from tool_router.routing.questions import QUESTION, clause_moods

STATE = 'vehicle_state'
# the airframe's pose and link, which a question about a payload does not ask for
AIRFRAME = frozenset(('attitude_imu', 'gps_position', 'compass_heading', 'altitude_sensor',
                  'link_quality'))
_POINTING = (r'point\w*|tilt\w*|angle|pitch|level|locked|lock|aim\w*|look\w*|fac\w+|yaw|'
             r'rotat\w*|crooked|straight|nadir|horizon|down|forward|ahead')
PAYLOAD_QUESTION = re.compile(
    rf'\bgimbal\b.*\b(?:{_POINTING})\b|\b(?:{_POINTING})\b.*\bgimbal\b|'
    rf'\bcamera\b.*\b(?:{_POINTING})\b|\b(?:{_POINTING})\b.*\bcamera\b|'
    r'\b(?:winch|hook|tether|cable)\b', re.IGNORECASE)
# the vehicle's own pose asked beside a payload: "how high are we with the winch out?"
_VEHICLE = r"(?:we|we're|us|our|drone|uav|quad|aircraft|vehicle|it|it's)"
_ITS_POSE = r'(?:high|altitude|height|heading|position|where|speed|fast|signal|link)'
VEHICLE_POSE = re.compile(rf'\b{_VEHICLE}\b.*\b{_ITS_POSE}\b|\b{_ITS_POSE}\b.*\b{_VEHICLE}\b',
                          re.IGNORECASE)


def answer_payload_questions(decision: Decision, text: str, catalog: Catalog
                            ) -> tuple[Decision, ClauseDrop | None]:
    """``decision`` with ``vehicle_state`` for the pose sensors of a question about a payload."""
    if STATE not in catalog or not decision.tools or not AIRFRAME & set(decision.tools) \
            or not PAYLOAD_QUESTION.search(text):
        return decision, None
    for cm in clause_moods(text):
        c = cm.clause
        if cm.mood.kind != QUESTION or c.negated or not PAYLOAD_QUESTION.search(c.text) \
                or VEHICLE_POSE.search(c.text):
            continue
        pose = [t for t in decision.tools
                if t in AIRFRAME and decision.clause_index.get(t) == c.index]
        if not pose:
            continue
        scores = dict(zip(decision.tools, decision.aligned_scores()))
        kept = decision.without(set(pose), f'{", ".join(pose)} dropped: "{c.text}" asks about '
                                           f'a payload ({STATE})')
        if STATE not in kept.tools:
            kept = kept.with_rule_tool(STATE, max(scores[t] for t in pose), c.index, c.text,
                                       'a question about a payload\'s state')
        return kept, ClauseDrop(c.text, tuple(pose), 'a question about a payload')
    return decision, None
