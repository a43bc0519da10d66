"""What a vehicle reports, as plain values: the source of the standard ROS telemetry messages.

The simulator (:mod:`tool_router.sim.vehicle`) and the MAVLink link
(:meth:`tool_router.executor.mavlink.MavlinkLink.telemetry`) each describe their vehicle as
one :class:`Telemetry`; :mod:`tool_router.ros.telemetry` turns it into
``sensor_msgs/BatteryState``, ``sensor_msgs/NavSatFix``, ``geometry_msgs/PoseStamped``,
``geometry_msgs/TwistStamped`` and ``tool_router/VehicleStatus``. Frames follow REP 103 and
REP 147: the local frame is east-north-up with its origin at home (``map``), the body frame is
forward-left-up; MAVLink's north-east-down and forward-right-down are converted here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

EARTH_RADIUS_M = 6_371_000.0


@dataclass(frozen=True)
class LocalPose:
    """Position and velocity in the ENU frame at home (x east, y north, z up), metres, m/s.

    ``yaw_rad`` is ENU yaw (0 = east, counter-clockwise: heading north is pi/2); roll and
    pitch are of the forward-left-up body.
    """

    x: float
    y: float
    z: float
    yaw_rad: float
    vx: float
    vy: float
    vz: float = 0.0
    roll_rad: float = 0.0
    pitch_rad: float = 0.0

    def quaternion(self) -> tuple[float, float, float, float]:
        """(x, y, z, w) of the body's orientation in the ENU frame (roll, pitch, yaw: ZYX)."""
        return quaternion_from_rpy(self.roll_rad, self.pitch_rad, self.yaw_rad)


@dataclass(frozen=True)
class Battery:
    """Charge in percent (0-100), pack voltage and cell voltages when reported."""

    percentage: float
    voltage_v: float | None = None
    cells_v: tuple[float, ...] = ()


@dataclass(frozen=True)
class Fix:
    """A satellite fix: degrees, metres; ``fix_type`` as MAVLink's GPS_FIX_TYPE (3 = 3D).

    ``altitude_m`` is above the WGS 84 ellipsoid when ``ellipsoid`` (as NavSatFix wants),
    else above mean sea level (the autopilot sent no ellipsoid height).
    """

    lat: float
    lon: float
    altitude_m: float
    fix_type: int = 3
    satellites: int = 0
    ellipsoid: bool = False


@dataclass(frozen=True)
class VehicleStatus:
    """Armed, mode, phase and the few numbers an operator UI shows (None: not reported)."""

    source: str  # mavlink | simulator
    autopilot: str
    link_lost: bool
    armed: bool
    mode: str
    phase: str
    on_ground: bool
    system_status: str = ''
    altitude_m: float | None = None
    amsl_m: float | None = None
    battery_pct: float | None = None


@dataclass(frozen=True)
class Telemetry:
    """One look at the vehicle; a part is None when its source has not reported it (fresh)."""

    status: VehicleStatus | None = None
    battery: Battery | None = None
    fix: Fix | None = None
    pose: LocalPose | None = None
    missing: tuple[str, ...] = field(default=())  # what was not fresh, for diagnostics


def enu_offset(lat: float, lon: float, home_lat: float, home_lon: float) -> tuple[float, float]:
    """East and north metres from home (a local tangent plane; fine within kilometres)."""
    lat0 = math.radians(home_lat)
    east = math.radians(lon - home_lon) * EARTH_RADIUS_M * math.cos(lat0)
    north = math.radians(lat - home_lat) * EARTH_RADIUS_M
    return east, north


def enu_yaw(heading_deg: float) -> float:
    """A compass heading (0 = north, clockwise) as ENU yaw in (-pi, pi]."""
    yaw = math.radians((90.0 - heading_deg) % 360.0)
    return yaw - 2 * math.pi if yaw > math.pi else yaw


def ned_to_enu_pose(east_m: float, north_m: float, up_m: float, roll_rad: float,
                    pitch_rad: float, yaw_ned_rad: float, v_north: float, v_east: float,
                    v_down: float) -> LocalPose:
    """MAVLink's attitude (FRD body in NED) and NED velocity as a REP 103 pose.

    As MAVROS converts: the FLU body's roll is the FRD roll, its pitch the negated pitch,
    and ENU yaw is pi/2 minus the NED yaw.
    """
    return LocalPose(x=east_m, y=north_m, z=up_m, yaw_rad=enu_yaw(math.degrees(yaw_ned_rad)),
                     vx=v_east, vy=v_north, vz=-v_down, roll_rad=roll_rad,
                     pitch_rad=-pitch_rad)


def quaternion_from_rpy(roll: float, pitch: float, yaw: float) -> tuple[float, float, float,
                                                                        float]:
    """(x, y, z, w) of a rotation by yaw about z, then pitch about y, then roll about x."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)
