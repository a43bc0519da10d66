"""What the MAVLink link knows, as telemetry and as a diagnostics status (pure; no ROS).

:func:`link_telemetry` describes the vehicle from the autopilot's freshest messages
(GLOBAL_POSITION_INT, ATTITUDE, GPS_RAW_INT, BATTERY_STATUS / SYS_STATUS, HOME_POSITION,
HEARTBEAT); a part whose messages are missing or stale is left out and named in
``missing``. :func:`link_health` is the link's line on ``/diagnostics``: heartbeat age,
packet loss per component, signing, refused messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tool_router.common.telemetry import (Battery, Fix, LocalPose, Telemetry, VehicleStatus,
                                          enu_offset, ned_to_enu_pose)
from tool_router.executor.mavlink import MAV_STATE_NAMES, MavlinkLink, SensorUnavailable

LOSS_WARN_PCT = 5.0  # packet loss from the autopilot above which the link is WARN


def link_telemetry(link: MavlinkLink) -> Telemetry:
    """The vehicle as its autopilot reports it now (fresh messages only)."""
    missing: list[str] = []
    pos = link.latest('GLOBAL_POSITION_INT')
    battery: Battery | None = None
    try:
        reading = link.read('battery')
        cells: tuple[float, ...] = ()
        raw = link.latest('BATTERY_STATUS')
        if raw is not None:  # one value with the rest UINT16_MAX: the pack, cells unknown
            known = [v / 1000.0 for v in raw.voltages if v not in (0, 65535)]
            cells = tuple(known) if len(known) > 1 else ()
        battery = Battery(reading['battery_pct'], reading['voltage_v'], cells)
    except SensorUnavailable:
        missing.append('BATTERY_STATUS/SYS_STATUS')
    status = _status(link, battery.percentage if battery is not None else None)
    if status is None:
        missing.append('HEARTBEAT')
    fix: Fix | None = None
    pose: LocalPose | None = None
    if pos is None:
        missing.append('GLOBAL_POSITION_INT')
    else:
        gps = link.latest('GPS_RAW_INT')
        ellipsoid = gps is not None and bool(getattr(gps, 'alt_ellipsoid', 0))
        fix = Fix(lat=pos.lat / 1e7, lon=pos.lon / 1e7,
                  altitude_m=(gps.alt_ellipsoid if ellipsoid else pos.alt) / 1000.0,
                  fix_type=int(gps.fix_type) if gps is not None else 0,
                  satellites=int(gps.satellites_visible) if gps is not None else 0,
                  ellipsoid=ellipsoid)
        pose = _pose(link, pos, missing)
    return Telemetry(status=status, battery=battery, fix=fix, pose=pose,
                     missing=tuple(missing))


def _status(link: MavlinkLink, battery: float | None) -> VehicleStatus | None:
    beat = link.last_heartbeat()
    if beat is None:
        return None
    flight = link.flight()
    profile = link.profile()
    phase = 'disarmed' if not flight.armed else ('landed' if flight.landed else 'airborne')
    return VehicleStatus(source='mavlink', autopilot=profile.label if profile else '',
                         link_lost=link.link_lost(), armed=flight.armed, mode=flight.mode,
                         phase=phase, on_ground=flight.landed,
                         system_status=MAV_STATE_NAMES.get(beat.system_status, '?'),
                         altitude_m=flight.relative_m, amsl_m=flight.amsl_m,
                         battery_pct=battery)


def _pose(link: MavlinkLink, pos: Any, missing: list[str]) -> LocalPose | None:
    home = link.home_position()
    if home is None:
        missing.append('HOME_POSITION')
        return None
    east, north = enu_offset(pos.lat / 1e7, pos.lon / 1e7, home.latitude / 1e7,
                             home.longitude / 1e7)
    att = link.latest('ATTITUDE')
    if att is None:
        missing.append('ATTITUDE')
        yaw = math.radians(pos.hdg / 100.0) if pos.hdg != 65535 else 0.0
        roll = pitch = 0.0
    else:
        roll, pitch, yaw = float(att.roll), float(att.pitch), float(att.yaw)
    return ned_to_enu_pose(east, north, pos.relative_alt / 1000.0, roll, pitch, yaw,
                           pos.vx / 100.0, pos.vy / 100.0, pos.vz / 100.0)


@dataclass(frozen=True)
class LinkHealth:
    """The link's diagnostics status: level (OK, WARN, ERROR), message, key-value pairs."""

    level: str
    message: str
    values: dict[str, str]


def link_health(link: MavlinkLink) -> LinkHealth:
    """Heartbeat age, loss per component, signing and refusals, with a level an operator reads.

    ERROR: no autopilot HEARTBEAT (never, or not within ``heartbeat_timeout_s``); WARN: a
    profile problem, loss above :data:`LOSS_WARN_PCT` or refused (unsigned, forged) messages.
    """
    c = link.config
    reading = link.read('link')
    values: dict[str, str] = {
        'connection': c.connection,
        'vehicle': f'{c.target_system}/{c.target_component}',
        'autopilot': reading['autopilot'] or 'unknown',
        'mode': link.mode(),
        'heartbeat_age_s': '' if reading['heartbeat_age_s'] is None
        else f"{reading['heartbeat_age_s']:.2f}",
        'signing': ('required' if c.require_signed else 'signed') if reading['signed']
        else 'off',
        'refused_messages': str(reading['refused']),
        'acks_ignored': str(reading['acks_ignored']),
        'stream_requests': str(reading['stream_requests']),
        'reboots': str(reading['reboots']),
    }
    worst = 0.0
    for (system, component), (received, lost) in sorted(link.loss_by_component().items()):
        pct = 100.0 * lost / (received + lost) if received + lost else 0.0
        values[f'loss_pct {system}/{component}'] = f'{pct:.2f}'
        values[f'received {system}/{component}'] = str(received)
        if (system, component) == (c.target_system, c.target_component):
            worst = pct
    problem = link.profile_problem()
    if reading['heartbeat_age_s'] is None:
        return LinkHealth('ERROR', f'no vehicle heartbeat yet on {c.connection}', values)
    if reading['link_lost']:
        return LinkHealth('ERROR', f"vehicle heartbeat lost {reading['heartbeat_age_s']:.1f} s "
                          'ago: motion commands refused', values)
    if problem:
        return LinkHealth('WARN', problem, values)
    if worst > LOSS_WARN_PCT:
        return LinkHealth('WARN', f'{worst:.1f}% of the autopilot\'s messages lost', values)
    if reading['refused']:
        return LinkHealth('WARN', f"{reading['refused']} message(s) refused for their "
                          'signature (docs/SECURITY.md)', values)
    return LinkHealth('OK', f"{values['autopilot']} linked, mode {values['mode']}", values)
