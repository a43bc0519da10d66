"""A simulated vehicle (a simulator, not a vehicle): the endpoints for all 42 catalog tools.

Offers ``<prefix>/tool_call`` (tool_router/srv/ToolCall: a tool's name with its arguments,
what the executor's ``call:`` bindings send: "take off to 20 m" arrives as ``height_m`` 20)
and, for calls by hand, ``<prefix>/<tool>`` for every tool as std_srvs/srv/Trigger, or
std_srvs/srv/SetBool for the on/off tools (spotlight, video_recorder, area_mapping); a
Trigger carries no arguments, so a tool that needs one (``set_altitude``, ``goto_waypoint``,
...) is refused there. Sensors answer with a human-readable text and, on a second line,
their machine-readable reading (``reading: {json}``) that condition watches compare. The
state machine is :class:`tool_router.sim.vehicle.SimVehicle`; refused commands answer
``success=false`` with the reason (and ToolCall's ``failure_mode``). The state is published
as JSON (std_msgs/String, with its ``stamp``) on ``<prefix>/state`` after every command and
periodically, with the standard ``<prefix>/pose`` (geometry_msgs/PoseStamped) and
``<prefix>/velocity`` (geometry_msgs/TwistStamped), stamped, in frame ``map``:
east-north-up metres from home; and ``<prefix>/battery`` (sensor_msgs/BatteryState) and
``<prefix>/fix`` (sensor_msgs/NavSatFix, altitude above mean sea level) and
``<prefix>/status`` (tool_router/VehicleStatus, latched) -- :mod:`tool_router.ros.telemetry`,
the same messages the executor's MAVLink link publishes under ``vehicle/``.

Parameters ``battery_pct``, ``battery_drain_pct_per_s``, ``takeoff_altitude_m`` and
``mission_duration_s`` may be set while it runs (``ros2 param set /sim_vehicle battery_pct
30.0``): the state changes at once; values outside their ranges (descriptors) are refused.
"""
from __future__ import annotations

import json
import time
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from tool_router.common import paths, signing
from tool_router.common.vehicle_calls import CallGuard
from tool_router.ros.common import spin
from tool_router.ros.telemetry import TelemetryPublisher
from tool_router.sim.vehicle import (ARGUMENT_NAMES, PARAMETER_RANGES, SENSORS, SETBOOL_TOOLS,
                                     Answer, ArgValue, SimVehicle, telemetry, tool_names)
from tool_router.srv import ToolCall

SENSOR_LOG_PERIOD_S = 5.0
PARAMETERS: dict[str, tuple[float, str]] = {
    'battery_pct': (100.0, 'Battery charge, %; setting it changes the charge now.'),
    'battery_drain_pct_per_s': (0.05, 'Battery drain in the air, % per second.'),
    'takeoff_altitude_m': (10.0, 'Height of a take-off that asks for none, m.'),
    'mission_duration_s': (30.0, 'Length of a simulated mission, s.'),
}


class SimVehicleNode(Node):
    """Services for every tool over one state machine; state on ``<prefix>/state``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('sim_vehicle', **kwargs)
        prefix = self.declare_parameter('prefix', 'sim', ParameterDescriptor(
            description='Namespace of the services and topics.', read_only=True)).value
        prefix = prefix.rstrip('/')
        signed = bool(self.declare_parameter('require_signed_calls', True, ParameterDescriptor(
            description='Act only on ToolCalls signed by the executor (docs/SECURITY.md); '
                        'false also offers a Trigger/SetBool service per actuator.',
            read_only=True)).value)
        key_file = str(self.declare_parameter('executor_key_file', '', ParameterDescriptor(
            description="The executor's key that signs its calls ('' = the executor's "
                        'default, $ROS_HOME/tool_router/keys/executor.key).',
            read_only=True)).value) or str(signing.default_executor_key_file())
        # one file per vehicle: a store rewrites its file when it starts
        where = '.'.join(p for p in f'{self.get_namespace()}/{prefix}'.split('/') if p)
        nonce_file = str(self.declare_parameter('nonce_file', '', ParameterDescriptor(
            description="Used call nonces, kept across restarts ('' = $ROS_HOME/tool_router/"
                        'sim/<namespace>.<prefix>.call_nonces).', read_only=True)).value) or str(
            paths.ros_home() / 'tool_router' / 'sim' / f'{where}.call_nonces')
        self._guard = self._call_guard(key_file, nonce_file) if signed else None
        period = float(self.declare_parameter('state_period_s', 1.0, ParameterDescriptor(
            description='Period of the state topic, s.', read_only=True)).value)
        # dynamic typing: `ros2 param set ... battery_pct 30` (an integer) is accepted too;
        # the type and the range are checked by _on_parameters (SimVehicle.set_parameter)
        values = {name: float(self.declare_parameter(name, default, ParameterDescriptor(
            description=text, dynamic_typing=True, floating_point_range=[FloatingPointRange(
                from_value=PARAMETER_RANGES[name][0], to_value=PARAMETER_RANGES[name][1])]
        )).value) for name, (default, text) in PARAMETERS.items()}
        self.vehicle = SimVehicle(takeoff_altitude_m=values['takeoff_altitude_m'],
                                  drain_pct_per_s=values['battery_drain_pct_per_s'],
                                  battery_pct=values['battery_pct'],
                                  mission_duration_s=values['mission_duration_s'])
        self.add_on_set_parameters_callback(self._on_parameters)
        group = MutuallyExclusiveCallbackGroup()  # one state machine: serialise commands
        self._tool_services: list[Any] = []
        self._sensor_logged: dict[str, float] = {}
        for tool in tool_names():
            if signed and tool not in SENSORS:
                continue  # an actuator acts only through the signed tool_call
            if tool in SETBOOL_TOOLS:
                srv = self.create_service(SetBool, f'{prefix}/{tool}', self._setbool(tool),
                                          callback_group=group)
            else:
                srv = self.create_service(Trigger, f'{prefix}/{tool}', self._trigger(tool),
                                          callback_group=group)
            self._tool_services.append(srv)
        self._call_service = self.create_service(ToolCall, f'{prefix}/tool_call',
                                                 self._tool_call, callback_group=group)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._state_pub = self.create_publisher(String, f'{prefix}/state', latched)
        self._telemetry = TelemetryPublisher(self, prefix)
        self._timer = self.create_timer(period, self._publish_state)
        self._publish_state()
        count = len(self._tool_services)
        if signed:
            self.get_logger().info(
                f'signed calls: the actuators act only through {prefix}/tool_call, signed with '
                f'the executor key {key_file}')
        else:
            for _ in range(3):
                self.get_logger().warning(
                    'UNSIGNED CALLS: require_signed_calls is false, so ANYONE on this DDS '
                    'domain may make the simulated vehicle act. Bench testing only.')
        self.get_logger().info(f'simulated vehicle ready: {count} services and tool_call under '
                               f'{prefix}/, state on {prefix}/state')

    def _call_guard(self, key_file: str, nonce_file: str) -> CallGuard:
        """The guard of signed calls; its used nonces in memory when the file cannot be written."""
        try:
            return CallGuard(key_file, nonce_file=nonce_file)
        except OSError as exc:
            guard = CallGuard(key_file)
            self.get_logger().warning(
                f'cannot keep call nonces in {nonce_file} ({exc}): in memory only, so a call '
                f'taken before a restart is taken again within {guard.window_s:g} s of signing')
            return guard

    def _on_parameters(self, params: list[Parameter]) -> SetParametersResult:
        """Apply runtime parameters to the vehicle; the range check is the descriptors'."""
        for param in params:
            if param.name in ('prefix', 'state_period_s'):
                return SetParametersResult(successful=False,
                                           reason=f'{param.name} is read at start only')
            if param.name not in PARAMETER_RANGES:
                continue
            try:
                self.vehicle.set_parameter(param.name, param.value)
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            self.get_logger().info(f'parameter {param.name} set to {float(param.value):g}')
        self._publish_state()
        return SetParametersResult(successful=True)

    def _tool_call(self, request: ToolCall.Request,
                   response: ToolCall.Response) -> ToolCall.Response:
        unknown = sorted(set(request.given) - set(ARGUMENT_NAMES))
        if unknown:
            answer = Answer(False, f'refused: unknown argument {", ".join(unknown)} (known: '
                                   f'{", ".join(ARGUMENT_NAMES)})', 'bad_argument')
        else:
            args: dict[str, ArgValue] = {
                name: bool(request.on) if name == 'on' else float(getattr(request, name))
                for name in request.given}
            refused = self._unauthorized(request, args)
            answer = (Answer(False, f'refused: {refused}', 'not_authorized') if refused
                      else self.vehicle.command(request.tool, args=args))
        response.success, response.message = answer.ok, answer.message
        response.failure_mode = answer.failure_mode
        self._after(request.tool, answer.ok, answer.message)
        return response

    def _unauthorized(self, request: ToolCall.Request, args: dict[str, ArgValue]) -> str:
        """Why a call is not the executor's ('' = it is, or signatures are not required)."""
        if self._guard is None:
            return ''
        return self._guard.check(request.tool, request.request_id, args,
                                 float(request.timestamp), request.nonce, request.signature)

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
        now = self.get_clock().now()
        state = self.vehicle.snapshot()
        state['stamp'] = now.nanoseconds / 1e9  # node clock, s (the pose topics' header stamp)
        self._state_pub.publish(String(data=json.dumps(state)))
        with self.vehicle.lock:
            now_telemetry = telemetry(self.vehicle.state)
        self._telemetry.publish(now_telemetry)


def main(args: list[str] | None = None) -> int:
    """Run the simulated vehicle until Ctrl-C."""
    return spin(SimVehicleNode, args, threads=2)


if __name__ == '__main__':
    raise SystemExit(main())
