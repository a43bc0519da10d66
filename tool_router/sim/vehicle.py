"""The simulated vehicle's state machine (pure Python, no ROS). A simulator, not a vehicle.

Phases: ``disarmed`` -> ``armed`` (on the ground, motors spinning) -> ``airborne``
-> ``landed`` (on the ground, still armed) -> ``disarmed``. Illegal
transitions (take off while disarmed, disarm in the air, land when on the
ground, release a payload that is not attached, ...) are refused with a clear
message and leave the state unchanged. Battery drains with time in the air.
Every catalog tool has a handler: actuators change the state, sensors return
a plausible reading computed from it.

Commands take the request's arguments (:data:`ARGUMENTS`, canonical units: the fields of
``tool_router.executor.arguments.ToolArguments`` plus ``radius_m``, ``duration_s`` and ``on``):
"take off to 20 m" holds at 20 m, ``goto_waypoint`` flies to the given coordinates. A
required argument that is missing (``set_altitude`` without an altitude), an argument the
tool does not take, a value that is not a finite number, or a value outside
:class:`Limits` (the ceiling, the geofence, the top speed) is refused with the reason and a
``failure_mode`` (``missing_argument``, ``bad_argument``, ``outside_limits``); nothing is
guessed. A refusal of the state machine itself has ``failure_mode`` ``vehicle_refused``.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping

from tool_router.common.conditions import HOME, distance_m, encode_reading
from tool_router.common.telemetry import (Battery, Fix, LocalPose, Telemetry, VehicleStatus,
                                          enu_offset, enu_yaw)

SETBOOL_TOOLS = ('spotlight', 'video_recorder', 'area_mapping')
SPOTLIGHT_DRAIN_PCT_PER_S = 0.005  # the spotlight's extra drain in the air
MISSION_ITEMS = 8  # the simulated mission's items (waypoints 1-8 as a ground station shows them)
MOTION_IN_AIR = ('hold_position', 'goto_waypoint', 'execute_mission', 'set_altitude', 'set_speed',
                 'set_heading', 'orbit_point', 'follow_target')

ArgValue = float | bool
# tool -> (required, optional) arguments; a tool not listed takes none
ARGUMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    'takeoff': ((), ('height_m',)),
    'set_altitude': (('altitude_m',), ()),
    'set_heading': (('heading_deg',), ()),
    'set_speed': (('speed_mps',), ()),
    'goto_waypoint': (('lat', 'lon'), ('altitude_m', 'speed_mps')),
    'gimbal_control': ((), ('pitch_deg',)),
    'hold_position': ((), ('duration_s',)),
    'orbit_point': ((), ('lat', 'lon', 'radius_m', 'duration_s', 'speed_mps')),
    'spotlight': ((), ('on',)),
    'video_recorder': ((), ('on',)),
    'area_mapping': ((), ('on',)),
}
ARGUMENT_NAMES = ('height_m', 'altitude_m', 'heading_deg', 'speed_mps', 'lat', 'lon',
                  'pitch_deg', 'radius_m', 'duration_s', 'on')
_WHAT = {'height_m': 'a take-off height', 'altitude_m': 'a target altitude',
         'heading_deg': 'a heading', 'speed_mps': 'a speed', 'lat': 'coordinates',
         'lon': 'coordinates', 'pitch_deg': 'a gimbal pitch', 'radius_m': 'a radius',
         'duration_s': 'a duration', 'on': 'on or off'}


@dataclass(frozen=True)
class Limits:
    """What the simulated vehicle can do; a command beyond them is refused (outside_limits)."""

    max_altitude_m: float = 120.0      # ceiling above the launch point
    min_takeoff_m: float = 1.0
    max_speed_mps: float = 15.0
    fence_radius_m: float = 200.0      # circular geofence around home
    orbit_radius_m: tuple[float, float] = (5.0, 100.0)
    gimbal_pitch_deg: tuple[float, float] = (-90.0, 30.0)
    max_duration_s: float = 3600.0


HOME_AMSL_M = 408.0  # the simulated home's altitude above mean sea level


def battery_voltage(s: 'VehicleState') -> float:
    """The simulated 4-cell pack's voltage at its charge (13.2 V empty, 16.8 V full)."""
    return 13.2 + 3.6 * s.battery_pct / 100.0


@dataclass
class VehicleState:
    """Everything the simulator tracks."""

    phase: str = 'disarmed'
    altitude_m: float = 0.0
    battery_pct: float = 100.0
    payload_attached: bool = True
    recording: bool = False
    spotlight: bool = False
    mapping: bool = False
    mode: str = 'MANUAL'
    heading_deg: float = 90.0
    speed_mps: float = 0.0
    cruise_speed_mps: float = 5.0
    gimbal_pitch_deg: float = 0.0
    orbit_radius_m: float = 0.0
    activity: str = ''  # '' | hold | orbit: a timed activity in the air
    activity_left_s: float = 0.0  # 0 with an activity: until told otherwise
    drain_pct_per_s: float = 0.05  # in the air (the spotlight adds SPOTLIGHT_DRAIN_PCT_PER_S)
    lat: float = HOME[0]
    lon: float = HOME[1]
    terminated: bool = False
    mission: str = 'none'  # none | running | finished
    mission_elapsed_s: float = 0.0
    waypoint: int = 0  # the last mission item reached, numbered as a ground station shows them
    commands: int = 0
    last_command: str = ''
    history: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    """Result of one command: ``ok`` False means refused, state unchanged."""

    ok: bool
    message: str
    # '' | vehicle_refused | missing_argument | bad_argument | outside_limits | unknown_tool
    failure_mode: str = ''


class SimVehicle:
    """Thread-safe believable vehicle; :meth:`command` runs one tool."""

    def __init__(self, takeoff_altitude_m: float = 10.0, drain_pct_per_s: float = 0.05,
                 clock: Callable[[], float] = time.monotonic, battery_pct: float = 100.0,
                 mission_duration_s: float = 30.0, limits: Limits = Limits()) -> None:
        self.takeoff_altitude_m = takeoff_altitude_m
        self.mission_duration_s = mission_duration_s
        self.limits = limits
        self._clock = clock
        self._last = clock()
        self.state = VehicleState(battery_pct=battery_pct, drain_pct_per_s=drain_pct_per_s)
        self._lock = threading.Lock()

    @property
    def lock(self) -> threading.Lock:
        """Held while a command runs; hold it to read :attr:`state` consistently."""
        return self._lock

    @property
    def drain_pct_per_s(self) -> float:
        """Battery drain in the air, % per second (without the spotlight's extra)."""
        return self.state.drain_pct_per_s

    def set_parameter(self, name: str, value: float) -> None:
        """Change a runtime parameter (the node's ``ros2 param set``); ValueError if invalid.

        ``battery_pct`` sets the charge now (the drain so far is applied first),
        ``battery_drain_pct_per_s`` the drain from now on, ``takeoff_altitude_m`` the
        height of a take-off without one, ``mission_duration_s`` the next mission's length.
        """
        problem = parameter_problem(name, value, self.limits)
        if problem:
            raise ValueError(problem)
        with self._lock:
            self.advance()
            if name == 'battery_pct':
                self.state.battery_pct = float(value)
            elif name == 'battery_drain_pct_per_s':
                self.state.drain_pct_per_s = float(value)
            elif name == 'takeoff_altitude_m':
                self.takeoff_altitude_m = float(value)
            else:
                self.mission_duration_s = float(value)

    # -- time --------------------------------------------------------------
    def advance(self) -> None:
        """Drain the battery for the time in the air since the last call; run the mission."""
        now = self._clock()
        dt, self._last = max(0.0, now - self._last), now
        s = self.state
        if s.phase == 'airborne':
            s.battery_pct = max(0.0, s.battery_pct - dt * drain_rate(s))
            if s.activity and s.activity_left_s > 0.0:
                s.activity_left_s = max(0.0, s.activity_left_s - dt)
                if s.activity_left_s == 0.0:
                    if s.activity == 'orbit':
                        s.mode, s.speed_mps, s.orbit_radius_m = 'LOITER', 0.0, 0.0
                    s.activity = ''
            if s.mission == 'running':
                s.mission_elapsed_s += dt
                if s.mission_elapsed_s >= self.mission_duration_s:
                    s.mission, s.mode, s.speed_mps = 'finished', 'LOITER', 0.0
        # the items reached follow from the mission: MISSION_ITEMS evenly spaced in time, none
        # while no mission runs (stopped, terminated), the last once it is finished
        s.waypoint = (0 if s.mission == 'none' else MISSION_ITEMS if s.mission == 'finished'
                      else min(MISSION_ITEMS, int(s.mission_elapsed_s / self.mission_duration_s
                                                  * MISSION_ITEMS)))

    def snapshot(self) -> dict[str, Any]:
        """The state as a JSON-ready dict (without the history)."""
        with self._lock:
            self.advance()
            data = asdict(self.state)
        data.pop('history')
        data['battery_pct'] = round(data['battery_pct'], 2)
        return data

    # -- commands ----------------------------------------------------------
    def command(self, tool: str, value: bool | None = None,
                args: Mapping[str, ArgValue] | None = None) -> Answer:
        """Run one tool with its arguments (``value``: ``on`` for the on/off tools).

        Refused commands change nothing and say why (``Answer.failure_mode``).
        """
        values = dict(args or {})
        if value is not None:
            values['on'] = value
        with self._lock:
            self.advance()
            handler = getattr(self, f'_do_{tool}', None)
            if handler is None and tool not in SENSORS:
                return Answer(False, f'unknown tool {tool!r}', 'unknown_tool')
            problem = self._check_arguments(tool, values)
            if problem is not None:
                return problem
            if handler is None:
                answer = Answer(True, encode_reading(SENSORS[tool](self.state),
                                                     READINGS[tool](self.state)))
            elif tool in ARGUMENTS:
                answer = handler(values)
            else:
                answer = handler()
            if answer.ok:
                self.state.commands += 1
                self.state.last_command = tool
                self.state.history.append(tool)
                del self.state.history[:-50]
            return answer

    def _check_arguments(self, tool: str, values: dict[str, ArgValue]) -> Answer | None:
        """A refusal when the arguments do not fit the tool, else None."""
        required, optional = ARGUMENTS.get(tool, ((), ()))
        unknown = sorted(set(values) - set(required) - set(optional))
        if unknown:
            takes = ', '.join(required + optional) or 'no arguments'
            return Answer(False, f'refused: {tool} does not take {", ".join(unknown)} '
                                 f'(it takes {takes})', 'bad_argument')
        for key, val in values.items():
            if key == 'on':
                if not isinstance(val, bool):
                    return Answer(False, f'refused: {tool}: on must be true or false',
                                  'bad_argument')
            elif isinstance(val, bool) or not isinstance(val, (int, float)) \
                    or not math.isfinite(val):
                return Answer(False, f'refused: {tool}: {key} {val!r} is not a finite number',
                              'bad_argument')
        missing = [k for k in required if k not in values]
        if missing:
            return Answer(False, f'refused: {tool} needs {_WHAT[missing[0]]} ({missing[0]}); '
                                 'nothing is guessed', 'missing_argument')
        if ('lat' in values) != ('lon' in values):
            return Answer(False, f'refused: {tool} needs both lat and lon', 'missing_argument')
        return None

    def _refuse(self, text: str) -> Answer:
        return Answer(False, f'refused: {text} (phase {self.state.phase}, '
                             f'altitude {self.state.altitude_m:.1f} m)', 'vehicle_refused')

    @staticmethod
    def _outside(text: str) -> Answer:
        return Answer(False, f'refused: {text}', 'outside_limits')

    @property
    def _on_ground(self) -> bool:
        return self.state.phase in ('disarmed', 'armed', 'landed')

    def _do_arm_motors(self) -> Answer:
        s = self.state
        if s.phase != 'disarmed':
            return self._refuse('motors are already armed')
        if s.battery_pct < 10.0:
            return self._refuse(f'battery {s.battery_pct:.0f} % is below the 10 % arming limit')
        s.phase, s.mode, s.terminated = 'armed', 'ARMED_IDLE', False
        return Answer(True, 'motors armed')

    def _do_disarm_motors(self) -> Answer:
        s = self.state
        if s.phase == 'airborne':
            return self._refuse('cannot disarm in the air; land first')
        if s.phase == 'disarmed':
            return self._refuse('motors are already disarmed')
        s.phase, s.mode, s.speed_mps = 'disarmed', 'MANUAL', 0.0
        return Answer(True, 'motors disarmed')

    def _do_takeoff(self, args: dict[str, ArgValue]) -> Answer:
        s, lim = self.state, self.limits
        height = float(args.get('height_m', self.takeoff_altitude_m))
        if not lim.min_takeoff_m <= height <= lim.max_altitude_m:
            return self._outside(f'take-off height {height:g} m is outside '
                                 f'{lim.min_takeoff_m:g}-{lim.max_altitude_m:g} m')
        if s.phase == 'disarmed':
            return self._refuse('cannot take off while disarmed; arm the motors first')
        if s.phase == 'airborne':
            return self._refuse('already airborne')
        s.phase, s.mode, s.altitude_m = 'airborne', 'TAKEOFF', height
        asked = '' if 'height_m' in args else ' (no height asked: the default take-off height)'
        return Answer(True, f'took off, holding at {s.altitude_m:.1f} m{asked}')

    def _land(self, how: str) -> Answer:
        s = self.state
        if s.phase != 'airborne':
            return self._refuse('already on the ground')
        s.phase, s.mode, s.altitude_m, s.speed_mps = 'landed', 'LAND', 0.0, 0.0
        s.mapping, s.activity, s.activity_left_s, s.orbit_radius_m = False, '', 0.0, 0.0
        if s.mission == 'running':
            s.mission = 'none'
        return Answer(True, how)

    def _do_land(self) -> Answer:
        return self._land('landed at the current position')

    def _do_precision_landing(self) -> Answer:
        return self._land('landed on the marker (offset 0.04 m)')

    def _do_return_to_home(self) -> Answer:
        answer = self._land('returned to home and landed')
        if answer.ok:
            self.state.lat, self.state.lon = HOME
        return answer

    def _in_air(self, tool: str, change: Callable[[VehicleState], str]) -> Answer:
        if self.state.phase != 'airborne':
            return self._refuse(f'{tool} needs the vehicle in the air')
        return Answer(True, change(self.state))

    def _duration(self, args: dict[str, ArgValue]) -> tuple[float, Answer | None]:
        duration = float(args.get('duration_s', 0.0))
        if 'duration_s' in args and not 0.0 < duration <= self.limits.max_duration_s:
            return 0.0, self._outside(f'duration {duration:g} s is outside '
                                      f'0-{self.limits.max_duration_s:g} s')
        return duration, None

    def _speed(self, args: dict[str, ArgValue], default: float) -> tuple[float, Answer | None]:
        speed = float(args.get('speed_mps', default))
        if not 0.0 < speed <= self.limits.max_speed_mps:
            return 0.0, self._outside(f'speed {speed:g} m/s is outside '
                                      f'0-{self.limits.max_speed_mps:g} m/s')
        return speed, None

    def _inside_fence(self, lat: float, lon: float, what: str) -> Answer | None:
        if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
            return Answer(False, f'refused: {lat:g},{lon:g} is not a latitude/longitude pair',
                          'bad_argument')
        away = distance_m(lat, lon, *HOME)
        if away > self.limits.fence_radius_m:
            return self._outside(f'{what} {lat:.6f},{lon:.6f} is {away:.0f} m from home, '
                                 f'outside the {self.limits.fence_radius_m:g} m geofence')
        return None

    def _altitude(self, value: float) -> Answer | None:
        if not 0.0 < value <= self.limits.max_altitude_m:
            return self._outside(f'altitude {value:g} m is outside '
                                 f'0-{self.limits.max_altitude_m:g} m above the launch point')
        return None

    def _do_hold_position(self, args: dict[str, ArgValue]) -> Answer:
        duration, problem = self._duration(args)
        if problem:
            return problem
        if self.state.phase != 'airborne':
            return self._refuse('hold_position needs the vehicle in the air')
        s = self.state
        s.mode, s.speed_mps, s.orbit_radius_m = 'LOITER', 0.0, 0.0
        s.activity, s.activity_left_s = 'hold', duration
        return Answer(True, f'holding position at {s.altitude_m:.1f} m'
                      + (f' for {duration:g} s' if duration else ''))

    def _do_goto_waypoint(self, args: dict[str, ArgValue]) -> Answer:
        s = self.state
        lat, lon = float(args['lat']), float(args['lon'])
        problem = self._inside_fence(lat, lon, 'waypoint')
        altitude = float(args.get('altitude_m', s.altitude_m))
        if problem is None and 'altitude_m' in args:
            problem = self._altitude(altitude)
        speed, slow = self._speed(args, s.cruise_speed_mps)
        problem = problem or slow
        if problem:
            return problem
        if s.phase != 'airborne':
            return self._refuse('goto_waypoint needs the vehicle in the air')
        flown = math.hypot(distance_m(s.lat, s.lon, lat, lon), altitude - s.altitude_m)
        travel_s = flown / speed
        # the flight is simulated at once; its time in the air drains the battery
        s.battery_pct = max(0.0, s.battery_pct - travel_s * drain_rate(s))
        s.lat, s.lon, s.altitude_m = lat, lon, altitude
        s.mode, s.speed_mps, s.activity, s.activity_left_s = 'GUIDED', 0.0, '', 0.0
        s.orbit_radius_m = 0.0
        return Answer(True, f'reached {lat:.6f},{lon:.6f} at {altitude:.1f} m: flew {flown:.0f} m '
                            f'at {speed:.1f} m/s in {travel_s:.0f} s')

    def _do_execute_mission(self) -> Answer:
        return self._in_air('execute_mission', lambda s: _set(
            s, mode='MISSION', speed_mps=6.0, mission='running', mission_elapsed_s=0.0,
            activity='', activity_left_s=0.0,
            msg=f'mission started (item 1/{MISSION_ITEMS}, about {self.mission_duration_s:g} s)'))

    def _do_set_altitude(self, args: dict[str, ArgValue]) -> Answer:
        target = float(args['altitude_m'])
        problem = self._altitude(target)
        if problem:
            return problem
        if self.state.phase != 'airborne':
            return self._refuse('set_altitude needs the vehicle in the air')
        s = self.state
        before, s.altitude_m = s.altitude_m, target
        verb = 'climbed' if target > before else 'descended' if target < before else 'stayed'
        return Answer(True, f'{verb} from {before:.1f} m to {target:.1f} m')

    def _do_set_speed(self, args: dict[str, ArgValue]) -> Answer:
        speed, problem = self._speed(args, 0.0)
        if problem:
            return problem
        if self.state.phase != 'airborne':
            return self._refuse('set_speed needs the vehicle in the air')
        s = self.state
        s.cruise_speed_mps = speed
        if s.speed_mps > 0.0:  # moving (mission, orbit, follow): at the new speed at once
            s.speed_mps = speed
        return Answer(True, f'cruise speed set to {speed:.1f} m/s')

    def _do_set_heading(self, args: dict[str, ArgValue]) -> Answer:
        heading = float(args['heading_deg'])
        if not -360.0 <= heading < 360.0:
            return Answer(False, f'refused: heading {heading:g} deg is not a heading',
                          'bad_argument')
        if self.state.phase != 'airborne':
            return self._refuse('set_heading needs the vehicle in the air')
        s = self.state
        s.heading_deg = heading % 360.0
        if s.heading_deg >= 360.0:  # a tiny negative heading wraps to 360.0 in floating point
            s.heading_deg = 0.0
        return Answer(True, f'turned to heading {s.heading_deg:.0f} deg')

    def _do_orbit_point(self, args: dict[str, ArgValue]) -> Answer:
        s, lim = self.state, self.limits
        problem = None
        if 'lat' in args:
            problem = self._inside_fence(float(args['lat']), float(args['lon']), 'orbit centre')
        radius = float(args.get('radius_m', 20.0))
        low, high = lim.orbit_radius_m
        if problem is None and not low <= radius <= high:
            problem = self._outside(f'orbit radius {radius:g} m is outside {low:g}-{high:g} m')
        duration, late = self._duration(args)
        speed, fast = self._speed(args, min(3.0, s.cruise_speed_mps))
        problem = problem or late or fast
        if problem:
            return problem
        if s.phase != 'airborne':
            return self._refuse('orbit_point needs the vehicle in the air')
        if 'lat' in args:
            s.lat, s.lon = float(args['lat']), float(args['lon'])
        s.mode, s.speed_mps, s.orbit_radius_m = 'ORBIT', speed, radius
        s.activity, s.activity_left_s = 'orbit', duration
        centre = f'{s.lat:.6f},{s.lon:.6f}'
        default = '' if 'radius_m' in args else ' (the default radius)'
        return Answer(True, f'orbiting {centre} at {radius:g} m radius{default}, '
                            f'{speed:.1f} m/s, {s.altitude_m:.1f} m'
                      + (f' for {duration:g} s' if duration else ''))

    def _do_follow_target(self) -> Answer:
        return self._in_air('follow_target', lambda s: _set(s, mode='FOLLOW',
                                                            msg='following the target'))

    def _do_emergency_stop(self) -> Answer:
        s = self.state
        if s.phase == 'disarmed':
            return self._refuse('motors are already stopped')
        fell = s.phase == 'airborne'
        s.phase, s.mode, s.altitude_m, s.speed_mps = 'disarmed', 'TERMINATED', 0.0, 0.0
        s.terminated, s.mission = True, 'none'
        s.recording = s.mapping = s.spotlight = False
        return Answer(True, 'motors cut' + (' in flight: vehicle fell' if fell else ''))

    def _do_payload_release(self) -> Answer:
        if not self.state.payload_attached:
            return self._refuse('no payload attached')
        self.state.payload_attached = False
        return Answer(True, 'payload released')

    def _do_winch_control(self) -> Answer:
        if not self.state.payload_attached:
            return self._refuse('no load on the winch')
        return Answer(True, 'winch moved the load 2.0 m')

    def _do_gimbal_control(self, args: dict[str, ArgValue]) -> Answer:
        if 'pitch_deg' not in args:
            return Answer(True, f'gimbal stays at pitch {self.state.gimbal_pitch_deg:g} deg '
                                '(no pitch given)')
        pitch = float(args['pitch_deg'])
        low, high = self.limits.gimbal_pitch_deg
        if not low <= pitch <= high:
            return self._outside(f'gimbal pitch {pitch:g} deg is outside {low:g}..{high:g} deg')
        self.state.gimbal_pitch_deg = pitch
        return Answer(True, f'gimbal pointed at pitch {pitch:g} deg')

    def _do_speaker_broadcast(self) -> Answer:
        return Answer(True, 'message broadcast')

    def _toggle(self, flag: str, label: str, on: bool) -> Answer:
        if getattr(self.state, flag) == on:
            return Answer(True, f'{label} already {"on" if on else "off"}')
        setattr(self.state, flag, on)
        return Answer(True, f'{label} {"on" if on else "off"}')

    def _do_spotlight(self, args: dict[str, ArgValue]) -> Answer:
        return self._toggle('spotlight', 'spotlight', bool(args.get('on', True)))

    def _do_video_recorder(self, args: dict[str, ArgValue]) -> Answer:
        return self._toggle('recording', 'video recording', bool(args.get('on', True)))

    def _do_area_mapping(self, args: dict[str, ArgValue]) -> Answer:
        on = bool(args.get('on', True))
        if on and self.state.phase != 'airborne':
            return self._refuse('mapping needs the vehicle in the air')
        return self._toggle('mapping', 'area mapping', on)


def _set(state: VehicleState, msg: str, **changes: object) -> str:
    for key, value in changes.items():
        setattr(state, key, value)
    return msg


# runtime parameters of the vehicle (SimVehicle.set_parameter): name -> (low, high)
PARAMETER_RANGES: dict[str, tuple[float, float]] = {
    'battery_pct': (0.0, 100.0),
    'battery_drain_pct_per_s': (0.0, 10.0),
    'takeoff_altitude_m': (1.0, 120.0),
    'mission_duration_s': (1.0, 3600.0),
}


def parameter_problem(name: str, value: object, limits: Limits = Limits()) -> str:
    """Why ``value`` is not a valid runtime parameter ``name`` ('' when it is)."""
    if name not in PARAMETER_RANGES:
        return f'{name} is not a runtime parameter of the simulated vehicle'
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f'{name} must be a finite number, not {value!r}'
    low, high = PARAMETER_RANGES[name]
    if name == 'takeoff_altitude_m':
        low, high = limits.min_takeoff_m, limits.max_altitude_m
    if not low <= value <= high:
        return f'{name} {value:g} is outside {low:g}..{high:g}'
    return ''


def drain_rate(s: VehicleState) -> float:
    """Battery drain in the air, % per second (the spotlight adds its share)."""
    return s.drain_pct_per_s + (SPOTLIGHT_DRAIN_PCT_PER_S if s.spotlight else 0.0)


def flight_time_left_s(s: VehicleState) -> float | None:
    """Seconds of flight the charge lasts at the current drain (None: no drain)."""
    rate = drain_rate(s)
    return s.battery_pct / rate if rate > 0.0 else None


def _battery(s: VehicleState) -> str:
    volts = 13.2 + 3.6 * s.battery_pct / 100.0
    left = flight_time_left_s(s)
    rate = drain_rate(s)
    if left is None:
        time_left = 'no drain configured'
    else:
        time_left = (f'~{left / 60.0:.1f} min ({left:.0f} s) of flight left at {rate:.3g} %/s'
                     + ('' if s.phase == 'airborne' else ' once airborne'))
    return (f'battery {s.battery_pct:.1f} %, {volts:.2f} V, '
            f'{12.5 if s.phase == "airborne" else 0.4:.1f} A, {time_left}')


def _fence_margin(s: VehicleState) -> float:
    """Metres left to the circular geofence around home."""
    return Limits().fence_radius_m - distance_m(s.lat, s.lon, *HOME)


def _camera(kind: str) -> Callable[[VehicleState], str]:
    def read(s: VehicleState) -> str:
        return f'{kind} captured at {s.lat:.5f},{s.lon:.5f}, altitude {s.altitude_m:.1f} m'
    return read


SENSORS: dict[str, Callable[[VehicleState], str]] = {
    'battery_status': _battery,
    'gps_position': lambda s: f'fix 3D, {s.lat:.6f},{s.lon:.6f}, '
                              f'{HOME_AMSL_M + s.altitude_m:.1f} m AMSL, 14 satellites',
    'altitude_sensor': lambda s: f'{s.altitude_m:.1f} m above takeoff, '
                                 f'{s.altitude_m:.1f} m above ground',
    'attitude_imu': lambda s: f'roll 0.4 deg, pitch {-2.0 if s.speed_mps else 0.1:.1f} deg, '
                              f'yaw {s.heading_deg:.0f} deg, vibration low',
    'compass_heading': lambda s: f'heading {s.heading_deg:.0f} deg, calibrated, no interference',
    'velocity_estimate': lambda s: f'ground speed {s.speed_mps:.1f} m/s, vertical 0.0 m/s',
    'wind_estimate': lambda s: 'wind 4.2 m/s from 250 deg, gusts 6.0 m/s',
    'obstacle_proximity': lambda s: 'nearest obstacle 18.5 m ahead, others beyond 30 m',
    'rgb_camera': _camera('photo'),
    'thermal_camera': _camera('thermal image (max 31.2 C)'),
    'multispectral_camera': _camera('multispectral image (mean NDVI 0.62)'),
    'lidar_scanner': lambda s: 'point cloud of 182 340 points, range 0.5-95 m',
    'object_detector': lambda s: 'detected {} person(s), {} vehicle(s)'.format(*_seen(s)),
    'air_quality_sensor': lambda s: 'CO 0.3 ppm, CO2 415 ppm, CH4 1.9 ppm, PM2.5 8 ug/m3',
    'weather_sensor': lambda s: 'air 17.8 C, humidity 62 %, pressure 1012.4 hPa',
    'link_quality': lambda s: 'RSSI -61 dBm, latency 38 ms, packet loss 0.2 %',
    'motor_status': lambda s: ('4 motors at ' + ('5200 rpm' if s.phase == 'airborne' else
                                                 '1100 rpm idle' if s.phase in ('armed', 'landed')
                                                 else '0 rpm')
                              + f', ESC max {_esc_temp(s):.0f} C'),
    'system_health': lambda s: 'all pre-flight checks pass, CPU load 23 %',
    'vehicle_state': lambda s: (f'phase {s.phase}, mode {s.mode}, altitude {s.altitude_m:.1f} m, '
                                f'battery {s.battery_pct:.0f} %'),
    'geofence_monitor': lambda s: f'inside geofence, {_fence_margin(s):.0f} m to the nearest '
                                  'boundary',
}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _seen(s: VehicleState) -> tuple[int, int]:
    """People and vehicles in view: the camera sees a scene only from the air."""
    return (2, 1) if s.phase == 'airborne' else (0, 0)


def _esc_temp(s: VehicleState) -> float:
    return 41.0 if s.phase == 'airborne' else 28.0 if s.phase in ('armed', 'landed') else 20.0


# The machine-readable reading of every sensor (what condition watches compare); the keys are
# the fields named in tool_router.common.conditions.QUANTITIES and STATES.
READINGS: dict[str, Callable[[VehicleState], dict[str, Any]]] = {
    'battery_status': lambda s: {'battery_pct': round(s.battery_pct, 3),
                                 'voltage_v': round(battery_voltage(s), 3),
                                 'drain_pct_per_s': round(drain_rate(s), 4),
                                 'flight_time_left_s': _rounded(flight_time_left_s(s))},
    'gps_position': lambda s: {'lat': s.lat, 'lon': s.lon, 'amsl_m': HOME_AMSL_M + s.altitude_m,
                               'home_distance_m': round(distance_m(s.lat, s.lon, *HOME), 2),
                               'gps_fix': True, 'satellites': 14},
    'altitude_sensor': lambda s: {'altitude_m': s.altitude_m},
    'attitude_imu': lambda s: {'roll_deg': 0.4, 'pitch_deg': -2.0 if s.speed_mps else 0.1,
                               'yaw_deg': s.heading_deg},
    'compass_heading': lambda s: {'heading_deg': s.heading_deg},
    'velocity_estimate': lambda s: {'speed_mps': s.speed_mps, 'vertical_mps': 0.0},
    'wind_estimate': lambda s: {'wind_mps': 4.2, 'gust_mps': 6.0, 'wind_from_deg': 250.0},
    'obstacle_proximity': lambda s: {'nearest_m': 18.5},
    'rgb_camera': lambda s: {'lat': s.lat, 'lon': s.lon, 'altitude_m': s.altitude_m},
    'thermal_camera': lambda s: {'max_temp_c': 31.2},
    'multispectral_camera': lambda s: {'ndvi': 0.62},
    'lidar_scanner': lambda s: {'points': 182340},
    # distances of the nearest one of each class (None: none in view); a real detector must
    # report them for proximity conditions ("if a person is within 3 m")
    'object_detector': lambda s: {'persons': _seen(s)[0], 'vehicles': _seen(s)[1],
                                  'animals': 0,
                                  'person_distance_m': 25.0 if _seen(s)[0] else None,
                                  'vehicle_distance_m': 40.0 if _seen(s)[1] else None,
                                  'animal_distance_m': None},
    'air_quality_sensor': lambda s: {'co_ppm': 0.3, 'co2_ppm': 415.0, 'ch4_ppm': 1.9,
                                     'pm25_ugm3': 8.0},
    'weather_sensor': lambda s: {'air_temp_c': 17.8, 'humidity_pct': 62.0,
                                 'pressure_hpa': 1012.4},
    'link_quality': lambda s: {'rssi_dbm': -61.0, 'latency_ms': 38.0, 'packet_loss_pct': 0.2,
                               'link_lost': False},
    'motor_status': lambda s: {'esc_temp_c': _esc_temp(s)},
    'system_health': lambda s: {'errors': 0, 'cpu_load_pct': 23.0},
    'vehicle_state': lambda s: {'phase': s.phase, 'mode': s.mode, 'altitude_m': s.altitude_m,
                                'battery_pct': round(s.battery_pct, 3), 'mission': s.mission,
                                'waypoint': s.waypoint,
                                'on_ground': s.phase != 'airborne',
                                'armed': s.phase != 'disarmed'},
    'geofence_monitor': lambda s: {'inside': _fence_margin(s) >= 0.0,
                                   'margin_m': round(_fence_margin(s), 2)},
}


def local_pose(s: VehicleState) -> LocalPose:
    """The vehicle's pose and velocity in the home ENU frame (what the pose topics carry)."""
    x, y = enu_offset(s.lat, s.lon, HOME[0], HOME[1])
    yaw = enu_yaw(s.heading_deg)
    return LocalPose(x=x, y=y, z=s.altitude_m, yaw_rad=yaw,
                     vx=s.speed_mps * math.cos(yaw), vy=s.speed_mps * math.sin(yaw))


def telemetry(s: VehicleState) -> Telemetry:
    """The simulated vehicle as the standard telemetry messages describe it (4-cell pack)."""
    volts = battery_voltage(s)
    status = VehicleStatus(source='simulator', autopilot='simulator', link_lost=False,
                           armed=s.phase != 'disarmed', mode=s.mode, phase=s.phase,
                           on_ground=s.phase != 'airborne', altitude_m=s.altitude_m,
                           amsl_m=HOME_AMSL_M + s.altitude_m, battery_pct=s.battery_pct)
    return Telemetry(status=status,
                     battery=Battery(s.battery_pct, volts, (volts / 4.0,) * 4),
                     fix=Fix(s.lat, s.lon, HOME_AMSL_M + s.altitude_m, 3, 14),
                     pose=local_pose(s))


def tool_names() -> list[str]:
    """Every tool the simulator serves (sensors and actuators)."""
    actuators = [name[4:] for name in dir(SimVehicle) if name.startswith('_do_')]
    return sorted(set(SENSORS) | set(actuators))
