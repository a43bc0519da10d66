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
"""
from __future__ import annotations

from dataclasses import dataclass

from tool_router.common.catalog import Catalog, Kind
from tool_router.common.clauses import split_clauses
from tool_router.common.conditions import Predicate, parse_condition
from tool_router.routing.policies.base import Decision

IMAGING = frozenset({'rgb_camera', 'thermal_camera', 'multispectral_camera', 'lidar_scanner'})


@dataclass(frozen=True)
class ExtraReadings:
    """A condition clause, the sensor that watches it, and the readings dropped from it."""

    clause: str
    sensor: str
    dropped: tuple[str, ...]


def drop_extra_readings(decision: Decision, text: str, catalog: Catalog
                        ) -> tuple[Decision, ExtraReadings | None]:
    """``decision`` without the extra sensors chosen from a condition that one sensor reads."""
    if len(decision.tools) < 2 or not decision.clause_index:
        return decision, None
    sensors = {t.name for t in catalog if t.kind is Kind.SENSOR} - IMAGING
    found: list[ExtraReadings] = []
    for clause in split_clauses(text):
        if clause.role != 'condition':
            continue
        mine = [t for t in decision.tools
                if decision.clause_index.get(t) == clause.index and t in sensors]
        if len(mine) < 2:
            continue
        read = parse_condition(clause.embedded, request=text)
        if isinstance(read, Predicate) and read.sensor in mine:
            found.append(ExtraReadings(clause.text, read.sensor,
                                       tuple(t for t in mine if t != read.sensor)))
    for fact in found:
        decision = decision.without(set(fact.dropped), f'{", ".join(fact.dropped)} dropped: the '
                                    f'condition "{fact.clause}" is read by {fact.sensor}')
    return decision, (found[0] if found else None)
