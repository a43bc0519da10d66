"""Standard ROS telemetry from a :class:`~tool_router.common.telemetry.Telemetry`.

Under a prefix (``sim`` for the simulator, ``vehicle`` for the executor's MAVLink link), all
names relative so a namespace moves them:

* ``<prefix>/pose`` geometry_msgs/PoseStamped and ``<prefix>/velocity`` TwistStamped, frame
  ``map`` (east-north-up at home, REP 103);
* ``<prefix>/battery`` sensor_msgs/BatteryState (``percentage`` 0-1, as the message says);
* ``<prefix>/fix`` sensor_msgs/NavSatFix (frame ``gps``);
* ``<prefix>/status`` tool_router/VehicleStatus (armed, mode, phase, link), latched.

Every header is stamped with the node's clock, so ``use_sim_time`` is honoured. A part the
source has not reported (no fresh telemetry) is not published rather than published as zeros.
"""

from __future__ import annotations

import math
from typing import Any

from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.node import Node
from sensor_msgs.msg import BatteryState, NavSatFix, NavSatStatus

from tool_router.common.telemetry import Battery, Fix, LocalPose, Telemetry, VehicleStatus
from tool_router.msg import VehicleStatus as VehicleStatusMsg
from tool_router.ros.common import latched

FRAME_ID = 'map'  # east-north-up at home
NAN = float('nan')


class TelemetryPublisher:
    """The five telemetry topics of one vehicle under ``prefix``."""

    def __init__(self, node: Node, prefix: str) -> None:
        self._node = node
        self._pose = node.create_publisher(PoseStamped, f'{prefix}/pose', 10)
        self._velocity = node.create_publisher(TwistStamped, f'{prefix}/velocity', 10)
        self._battery = node.create_publisher(BatteryState, f'{prefix}/battery', 10)
        self._fix = node.create_publisher(NavSatFix, f'{prefix}/fix', 10)
        self._status = node.create_publisher(VehicleStatusMsg, f'{prefix}/status', latched(1))

    def close(self) -> None:
        """Destroy the publishers."""
        for publisher in (self._pose, self._velocity, self._battery, self._fix, self._status):
            self._node.destroy_publisher(publisher)

    def publish(self, telemetry: Telemetry) -> None:
        """Publish every part that is present, all with one stamp of the node's clock."""
        stamp = self._node.get_clock().now().to_msg()
        if telemetry.pose is not None:
            pose, twist = pose_msgs(telemetry.pose, stamp)
            self._pose.publish(pose)
            self._velocity.publish(twist)
        if telemetry.battery is not None:
            self._battery.publish(battery_msg(telemetry.battery, stamp))
        if telemetry.fix is not None:
            self._fix.publish(fix_msg(telemetry.fix, stamp))
        if telemetry.status is not None:
            self._status.publish(status_msg(telemetry.status, stamp))


def pose_msgs(local: LocalPose, stamp: Any) -> tuple[PoseStamped, TwistStamped]:
    """PoseStamped and TwistStamped in the ``map`` frame."""
    pose = PoseStamped()
    pose.header.stamp, pose.header.frame_id = stamp, FRAME_ID
    p = pose.pose.position
    p.x, p.y, p.z = float(local.x), float(local.y), float(local.z)
    q = pose.pose.orientation
    q.x, q.y, q.z, q.w = local.quaternion()
    twist = TwistStamped()
    twist.header.stamp, twist.header.frame_id = stamp, FRAME_ID
    v = twist.twist.linear
    v.x, v.y, v.z = float(local.vx), float(local.vy), float(local.vz)
    return pose, twist


def battery_msg(battery: Battery, stamp: Any) -> BatteryState:
    """BatteryState: percentage as a fraction; unknown voltage NaN (as the message defines)."""
    msg = BatteryState(percentage=float(battery.percentage) / 100.0,
                       voltage=NAN if battery.voltage_v is None else float(battery.voltage_v),
                       present=True,
                       power_supply_status=BatteryState.POWER_SUPPLY_STATUS_DISCHARGING,
                       power_supply_technology=BatteryState.POWER_SUPPLY_TECHNOLOGY_LIPO,
                       cell_voltage=[float(v) for v in battery.cells_v])
    msg.header.stamp, msg.header.frame_id = stamp, 'base_link'
    return msg


def fix_status(fix_type: int) -> int:
    """MAVLink GPS_FIX_TYPE as NavSatStatus: none below 2D, SBAS for DGPS, GBAS for RTK."""
    if fix_type < 2:
        return NavSatStatus.STATUS_NO_FIX
    if fix_type == 4:
        return NavSatStatus.STATUS_SBAS_FIX
    if fix_type in (5, 6):
        return NavSatStatus.STATUS_GBAS_FIX
    return NavSatStatus.STATUS_FIX


def fix_msg(fix: Fix, stamp: Any) -> NavSatFix:
    """NavSatFix of a fix; the covariance is not known."""
    msg = NavSatFix(latitude=float(fix.lat), longitude=float(fix.lon),
                    altitude=float(fix.altitude_m),
                    position_covariance_type=NavSatFix.COVARIANCE_TYPE_UNKNOWN)
    msg.status.status = fix_status(fix.fix_type)
    msg.status.service = NavSatStatus.SERVICE_GPS
    msg.header.stamp, msg.header.frame_id = stamp, 'gps'
    return msg


def status_msg(status: VehicleStatus, stamp: Any) -> VehicleStatusMsg:
    """tool_router/VehicleStatus; a value not reported is NaN."""
    def number(value: float | None) -> float:
        return NAN if value is None or not math.isfinite(value) else float(value)

    msg = VehicleStatusMsg(source=status.source, autopilot=status.autopilot,
                           link_lost=status.link_lost, armed=status.armed, mode=status.mode,
                           phase=status.phase, on_ground=status.on_ground,
                           system_status=status.system_status,
                           altitude_m=number(status.altitude_m), amsl_m=number(status.amsl_m),
                           battery_pct=number(status.battery_pct))
    msg.header.stamp, msg.header.frame_id = stamp, 'base_link'
    return msg
