"""A condition is watched by the sensor that reads it; other readings of its clause are extras.

ANNOTATION.md gives a condition the sensor that reads it. lcr scores the condition's clause like
any other and sometimes adds a second reading: "once you're at 100 ft snap a photo" got
``gps_position`` beside ``altitude_sensor`` ("you're at" reads like an arrival), "if any ESC
goes over 80 degrees, land" ``attitude_imu`` beside ``motor_status``, "hold there if someone
gets closer than 4 m" ``obstacle_proximity`` beside ``object_detector`` (pubw5 and v2 dev).
The rule parses each condition clause with the executor's own grammar
(:func:`tool_router.common.conditions.parse_condition`); when it reads a predicate on a sensor
that was chosen from that clause, the other non-imaging sensors chosen from that clause alone
are dropped. A camera stays (an image can be how a detection is made: "if there's a fox in the
scrub, it's dark" keeps ``thermal_camera``); a condition the grammar refuses, or whose sensor
the policy did not choose there, changes nothing. docs/CONVENTIONS.md, "A condition's sensor".

A condition is watched, never ordered: "when the drone lands, disarm" got ``land`` and "take off
and start streaming once above 100 ft" ``set_altitude``, each chosen from the condition's clause
alone (pubw6). When the grammar reads the clause as a predicate on the field an actuator sets
(the ground for ``land`` and ``takeoff``, the altitude for ``set_altitude``, the speed for
``set_speed``, the mission for ``execute_mission``), that actuator, chosen from the clause alone,
is dropped (:func:`drop_condition_orders`), unless an action clause orders it in its own words:
"if it gets higher than 2 m bring it back down to 1" keeps ``set_altitude`` (lcr gave it to
the condition, the order is the action's), "run the patrol, come home when the patrol is done"
keeps ``execute_mission``. Other actuators are left alone: a clause the splitter could not cut
("if gusts go over 15 knots put it down") holds its order. The end of another order ("record
until we land") is read the same way, as "when" would read it: it orders no landing (stop 48).

A condition of several readings ("if wind over 15 knots or battery under 30%, come home") gets
the sensor of each (:func:`add_joined_sensors`, stop 48).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tool_router.common.catalog import Catalog, Kind
from tool_router.common.clauses import split_clauses
from tool_router.common.conditions import Parsed, Predicate, joined_parts, parse_condition
from tool_router.routing.policies.base import Decision

IMAGING = frozenset({'rgb_camera', 'thermal_camera', 'multispectral_camera', 'lidar_scanner'})


@lru_cache(maxsize=128)
def _read(condition: str, request: str) -> Parsed:
    """The executor's reading of one condition clause of ``request``.

    Both rules of this module read the same clauses of the same request, one after the other:
    the grammar runs once per clause (its answers are frozen).
    """
    return parse_condition(condition, request=request)


@dataclass(frozen=True)
class ConditionDrop:
    """A condition clause, the sensor that watches it, and the tools dropped from it."""

    clause: str
    sensor: str
    dropped: tuple[str, ...]


def drop_extra_readings(decision: Decision, text: str, catalog: Catalog
                        ) -> tuple[Decision, ConditionDrop | None]:
    """``decision`` without the extra sensors chosen from a condition that one sensor reads."""
    if len(decision.tools) < 2 or not decision.clause_index:
        return decision, None
    sensors = {t.name for t in catalog if t.kind is Kind.SENSOR} - IMAGING
    found: list[ConditionDrop] = []
    for clause in split_clauses(text):
        if clause.role != 'condition':
            continue
        mine = [t for t in decision.tools
                if decision.clause_index.get(t) == clause.index and t in sensors]
        if len(mine) < 2:
            continue
        read = _read(clause.embedded, text)
        if isinstance(read, Predicate) and read.sensor in mine:
            found.append(ConditionDrop(clause.text, read.sensor,
                                       tuple(t for t in mine if t != read.sensor)))
    for fact in found:
        decision = decision.without(set(fact.dropped), f'{", ".join(fact.dropped)} dropped: the '
                                    f'condition "{fact.clause}" is read by {fact.sensor}')
    return decision, (found[0] if found else None)


# (the field a predicate reads, the actuator that sets it) -> the words an action orders it by
_SETS = {
    ('on_ground', 'land'): re.compile(r'\b(?:land|put (?:it|her) down|touch down|set (?:it )?down|'
                                      r'come down)\b', re.IGNORECASE),
    ('on_ground', 'takeoff'): re.compile(r'\b(?:take ?off|takeoff|launch|lift ?off|airborne)\b',
                                         re.IGNORECASE),
    ('altitude_m', 'set_altitude'): re.compile(
        r'\b(?:climb|descend|altitude|alt|height|up|down|rise|ascend|lower|higher|'
        r'\d+(?:\.\d+)?\s*(?:m|ft|meters?|metres?|feet))\b', re.IGNORECASE),
    ('speed_mps', 'set_speed'): re.compile(r'\b(?:speed|slow|faster|knots|kts|m/s|mph|km/h|kph)\b',
                                           re.IGNORECASE),
    ('mission', 'execute_mission'): re.compile(r'\b(?:mission|survey|patrol|route|run|start|'
                                               r'resume|plan)\b', re.IGNORECASE),
}


_ENDS = frozenset({'until', 'till', 'while', 'before'})


def drop_condition_orders(decision: Decision, text: str, catalog: Catalog
                          ) -> tuple[Decision, ConditionDrop | None]:
    """``decision`` without the actuators chosen only from a condition that a sensor reads."""
    if len(decision.tools) < 2 or not decision.clause_index:
        return decision, None
    clauses = split_clauses(text)
    actions = ' '.join(c.text for c in clauses if c.role == 'action')
    if not actions:
        return decision, None  # the whole request read as a condition: the order is in it
    found: list[ConditionDrop] = []
    for clause in clauses:
        if clause.role != 'condition':
            continue
        mine = [t for t in decision.tools if decision.clause_index.get(t) == clause.index]
        # "record until we land": the end of another order, which the executor refuses to
        # watch; what it reads is still no order of its own (dev: "record video ... until it
        # lands again" is the recorder alone)
        ends = clause.marker in _ENDS
        read = _read(f'when {clause.text}' if ends else clause.embedded, text) if mine else None
        if not isinstance(read, Predicate) or (read.sensor not in decision.tools and not ends):
            continue
        watched = [t for t in mine if (read.field, t) in _SETS and t in catalog
                   and catalog.get(t).kind is Kind.ACTUATOR
                   and not _SETS[(read.field, t)].search(actions)]
        if watched:
            found.append(ConditionDrop(clause.text, read.sensor, tuple(watched)))
    for fact in found:
        decision = decision.without(set(fact.dropped), f'{", ".join(fact.dropped)} dropped: '
                                    f'"{fact.clause}" is a condition {fact.sensor} watches')
    return decision, (found[0] if found else None)


@dataclass(frozen=True)
class JoinedSensors:
    """A condition clause of several readings, and the sensors added for them."""

    clause: str
    added: tuple[str, ...]


def add_joined_sensors(decision: Decision, text: str, catalog: Catalog
                       ) -> tuple[Decision, JoinedSensors | None]:
    """``decision`` with the sensor of each reading of a condition clause joined by or/and.

    ANNOTATION.md gives a condition the sensor that reads it, and dev gives a condition of two
    readings both ("if the wind goes over 10 m/s or the pack falls below 25%, land": 9 of 9 dev
    requests); lcr kept one in the terse ones ("if wind > 20 knots or battery < 30% come home",
    pubw10 and v2 dev). Each half of such a clause is read by the executor's grammar, and the
    sensor of each half it reads as a predicate on a catalog sensor is added for that clause
    when the answer lacks it, with the answer's lowest score (a half it refuses adds nothing:
    "sats < 8 or compass off" adds the satellites' sensor). The executor still refuses the combined
    condition with its reason (one condition per action); the answer names what it would watch.
    Never into an empty answer, never for a negated clause.
    """
    if not decision.tools or not re.search(r'\b(?:or|and|but)\b', text, re.IGNORECASE):
        return decision, None
    for clause in split_clauses(text):
        if clause.role != 'condition' or clause.negated:
            continue
        halves = joined_parts(clause.text)
        if len(halves) < 2:
            continue
        reads = [_read(f'if {half}', text) for half in halves]
        # the halves the grammar reads ("sats < 8 or compass off": the satellites' sensor)
        if not any(isinstance(r, Predicate) and r.sensor in catalog for r in reads):
            continue
        missing = tuple(dict.fromkeys(r.sensor for r in reads if isinstance(r, Predicate)
                                      and r.sensor in catalog and r.sensor not in decision.tools))
        if not missing:
            continue
        low = min(decision.aligned_scores())
        for sensor in missing:
            decision = decision.with_rule_tool(
                sensor, low, clause.index, clause.text,
                f'one reading of the joined condition "{clause.text}"')
        return decision, JoinedSensors(clause.text, missing)
    return decision, None
