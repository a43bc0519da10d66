"""A simulated vehicle (a simulator, not a vehicle): the endpoints for all 42 catalog tools.

Offers ``<prefix>/<tool>`` for every tool, as std_srvs/srv/Trigger, or
std_srvs/srv/SetBool for the on/off tools (spotlight, video_recorder,
area_mapping). Sensors answer with a human-readable text and, on a second line,
their machine-readable reading (``reading: {json}``) that condition watches
compare. The state machine is :class:`tool_router.sim.vehicle.SimVehicle`;
refused commands answer ``success=false`` with the reason. The state is
published as JSON (std_msgs/String) on ``<prefix>/state`` after every command
and periodically.
"""
from __future__ import annotations

import json
import time
from typing import Any

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from tool_router.sim.vehicle import SENSORS, SETBOOL_TOOLS, SimVehicle, tool_names
from tool_router.ros.common import spin

SENSOR_LOG_PERIOD_S = 5.0


class SimVehicleNode(Node):
    """Services for every tool over one state machine; state on ``<prefix>/state``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('sim_vehicle', **kwargs)
        prefix = self.declare_parameter('prefix', 'sim').value.rstrip('/')
        altitude = float(self.declare_parameter('takeoff_altitude_m', 10.0).value)
        drain = float(self.declare_parameter('battery_drain_pct_per_s', 0.05).value)
        period = float(self.declare_parameter('state_period_s', 1.0).value)
        battery = float(self.declare_parameter('battery_pct', 100.0).value)
        mission_s = float(self.declare_parameter('mission_duration_s', 30.0).value)
        self.vehicle = SimVehicle(takeoff_altitude_m=altitude, drain_pct_per_s=drain,
                                  battery_pct=battery, mission_duration_s=mission_s)
        group = MutuallyExclusiveCallbackGroup()  # one state machine: serialise commands
        self._tool_services: list[Any] = []
        self._sensor_logged: dict[str, float] = {}
        for tool in tool_names():
            if tool in SETBOOL_TOOLS:
                srv = self.create_service(SetBool, f'{prefix}/{tool}', self._setbool(tool),
                                          callback_group=group)
            else:
                srv = self.create_service(Trigger, f'{prefix}/{tool}', self._trigger(tool),
                                          callback_group=group)
            self._tool_services.append(srv)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._state_pub = self.create_publisher(String, f'{prefix}/state', latched)
        self._timer = self.create_timer(period, self._publish_state)
        self._publish_state()
        count = len(self._tool_services)
        self.get_logger().info(f'simulated vehicle ready: {count} services under {prefix}/, '
                               f'state on {prefix}/state')

    def _trigger(self, tool: str) -> Any:
        def handle(request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            answer = self.vehicle.command(tool)
            response.success, response.message = answer.ok, answer.message
            self._after(tool, answer.ok, answer.message)
            return response
        return handle

    def _setbool(self, tool: str) -> Any:
        def handle(request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
            answer = self.vehicle.command(tool, bool(request.data))
            response.success, response.message = answer.ok, answer.message
            self._after(tool, answer.ok, answer.message)
            return response
        return handle

    def _after(self, tool: str, ok: bool, message: str) -> None:
        if ok and tool in SENSORS:
            # condition watches read sensors every few hundred ms: log each sensor at most
            # every SENSOR_LOG_PERIOD_S (all reads answer; only the log is thinned)
            now = time.monotonic()
            if now - self._sensor_logged.get(tool, -SENSOR_LOG_PERIOD_S) >= SENSOR_LOG_PERIOD_S:
                self._sensor_logged[tool] = now
                self.get_logger().info(f'{tool}: {message.splitlines()[0]}')
        elif ok:
            self.get_logger().info(f'{tool}: {message}')
        else:
            self.get_logger().warning(f'{tool}: {message}')
        self._publish_state()

    def _publish_state(self) -> None:
        self._state_pub.publish(String(data=json.dumps(self.vehicle.snapshot())))


def main(args: list[str] | None = None) -> int:
    """Run the simulated vehicle until Ctrl-C."""
    return spin(SimVehicleNode, args, threads=2)


if __name__ == '__main__':
    raise SystemExit(main())
