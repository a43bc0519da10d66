"""The simulated vehicle's state machine (pure Python, no ROS). A simulator, not a vehicle.

Phases: ``disarmed`` -> ``armed`` (on the ground, motors spinning) -> ``airborne``
-> ``landed`` (on the ground, still armed) -> ``disarmed``. Illegal
transitions (take off while disarmed, disarm in the air, land when on the
ground, release a payload that is not attached, ...) are refused with a clear
message and leave the state unchanged. Battery drains with time in the air.
Every catalog tool has a handler: actuators change the state, sensors return
a plausible reading computed from it.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from tool_router.common.conditions import HOME, distance_m, encode_reading

SETBOOL_TOOLS = ('spotlight', 'video_recorder', 'area_mapping')
MOTION_IN_AIR = ('hold_position', 'goto_waypoint', 'execute_mission', 'set_altitude', 'set_speed',
                 'set_heading', 'orbit_point', 'follow_target')


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
    lat: float = HOME[0]
    lon: float = HOME[1]
    terminated: bool = False
    mission: str = 'none'  # none | running | finished
    mission_elapsed_s: float = 0.0
    commands: int = 0
    last_command: str = ''
    history: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    """Result of one command: ``ok`` False means refused, state unchanged."""

    ok: bool
    message: str


class SimVehicle:
    """Thread-safe believable vehicle; :meth:`command` runs one tool."""

    def __init__(self, takeoff_altitude_m: float = 10.0, drain_pct_per_s: float = 0.05,
                 clock: Callable[[], float] = time.monotonic, battery_pct: float = 100.0,
                 mission_duration_s: float = 30.0) -> None:
        self.takeoff_altitude_m = takeoff_altitude_m
        self.drain_pct_per_s = drain_pct_per_s
        self.mission_duration_s = mission_duration_s
        self._clock = clock
        self._last = clock()
        self.state = VehicleState(battery_pct=battery_pct)
        self._lock = threading.Lock()

    # -- time --------------------------------------------------------------
    def advance(self) -> None:
        """Drain the battery for the time in the air since the last call; run the mission."""
        now = self._clock()
        dt, self._last = max(0.0, now - self._last), now
        s = self.state
        if s.phase == 'airborne':
            extra = 0.5 if s.spotlight else 0.0
            s.battery_pct = max(0.0, s.battery_pct - dt * (self.drain_pct_per_s + extra * 0.01))
            if s.mission == 'running':
                s.mission_elapsed_s += dt
                if s.mission_elapsed_s >= self.mission_duration_s:
                    s.mission, s.mode, s.speed_mps = 'finished', 'LOITER', 0.0

    def snapshot(self) -> dict[str, Any]:
        """The state as a JSON-ready dict (without the history)."""
        with self._lock:
            self.advance()
            data = asdict(self.state)
        data.pop('history')
        data['battery_pct'] = round(data['battery_pct'], 2)
        return data

    # -- commands ----------------------------------------------------------
    def command(self, tool: str, value: bool | None = None) -> Answer:
        """Run one tool (``value`` for the on/off tools); refused commands change nothing."""
        with self._lock:
            self.advance()
            handler = getattr(self, f'_do_{tool}', None)
            if handler is None:
                reader = SENSORS.get(tool)
                if reader is None:
                    return Answer(False, f'unknown tool {tool!r}')
                answer = Answer(True, encode_reading(reader(self.state),
                                                     READINGS[tool](self.state)))
            elif tool in SETBOOL_TOOLS:
                answer = handler(True if value is None else value)
            else:
                answer = handler()
            if answer.ok:
                self.state.commands += 1
                self.state.last_command = tool
                self.state.history.append(tool)
                del self.state.history[:-50]
            return answer

    def _refuse(self, text: str) -> Answer:
        return Answer(False, f'refused: {text} (phase {self.state.phase}, '
                             f'altitude {self.state.altitude_m:.1f} m)')

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

    def _do_takeoff(self) -> Answer:
        s = self.state
        if s.phase == 'disarmed':
            return self._refuse('cannot take off while disarmed; arm the motors first')
        if s.phase == 'airborne':
            return self._refuse('already airborne')
        s.phase, s.mode, s.altitude_m = 'airborne', 'TAKEOFF', self.takeoff_altitude_m
        return Answer(True, f'took off, holding at {s.altitude_m:.1f} m')

    def _land(self, how: str) -> Answer:
        s = self.state
        if s.phase != 'airborne':
            return self._refuse('already on the ground')
        s.phase, s.mode, s.altitude_m, s.speed_mps = 'landed', 'LAND', 0.0, 0.0
        s.mapping = False
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

    def _do_hold_position(self) -> Answer:
        return self._in_air('hold_position', lambda s: _set(s, mode='LOITER', speed_mps=0.0,
                                                            msg='holding position'))

    def _do_goto_waypoint(self) -> Answer:
        return self._in_air('goto_waypoint', lambda s: _set(
            s, mode='GUIDED', speed_mps=5.0, lat=s.lat + 0.0005, lon=s.lon + 0.0005,
            msg='flying to the waypoint'))

    def _do_execute_mission(self) -> Answer:
        return self._in_air('execute_mission', lambda s: _set(
            s, mode='MISSION', speed_mps=6.0, mission='running', mission_elapsed_s=0.0,
            msg=f'mission started (item 1/8, about {self.mission_duration_s:g} s)'))

    def _do_set_altitude(self) -> Answer:
        return self._in_air('set_altitude', lambda s: _set(
            s, altitude_m=s.altitude_m + 5.0, msg=f'climbing to {s.altitude_m + 5.0:.1f} m'))

    def _do_set_speed(self) -> Answer:
        return self._in_air('set_speed', lambda s: _set(s, speed_mps=8.0,
                                                        msg='cruise speed set to 8.0 m/s'))

    def _do_set_heading(self) -> Answer:
        return self._in_air('set_heading', lambda s: _set(
            s, heading_deg=(s.heading_deg + 90.0) % 360, msg='turning in place'))

    def _do_orbit_point(self) -> Answer:
        return self._in_air('orbit_point', lambda s: _set(s, mode='ORBIT', speed_mps=3.0,
                                                          msg='orbiting at 20 m radius'))

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

    def _do_gimbal_control(self) -> Answer:
        return Answer(True, 'gimbal pointed at pitch -45 deg')

    def _do_speaker_broadcast(self) -> Answer:
        return Answer(True, 'message broadcast')

    def _toggle(self, flag: str, label: str, on: bool) -> Answer:
        if getattr(self.state, flag) == on:
            return Answer(True, f'{label} already {"on" if on else "off"}')
        setattr(self.state, flag, on)
        return Answer(True, f'{label} {"on" if on else "off"}')

    def _do_spotlight(self, on: bool) -> Answer:
        return self._toggle('spotlight', 'spotlight', on)

    def _do_video_recorder(self, on: bool) -> Answer:
        return self._toggle('recording', 'video recording', on)

    def _do_area_mapping(self, on: bool) -> Answer:
        if on and self.state.phase != 'airborne':
            return self._refuse('mapping needs the vehicle in the air')
        return self._toggle('mapping', 'area mapping', on)


def _set(state: VehicleState, msg: str, **changes: object) -> str:
    for key, value in changes.items():
        setattr(state, key, value)
    return msg


def _battery(s: VehicleState) -> str:
    volts = 13.2 + 3.6 * s.battery_pct / 100.0
    minutes = s.battery_pct / 100.0 * 25.0
    return (f'battery {s.battery_pct:.1f} %, {volts:.2f} V, '
            f'{12.5 if s.phase == "airborne" else 0.4:.1f} A, ~{minutes:.0f} min left')


def _fence_margin(s: VehicleState) -> float:
    """Metres left to a 200 m circular fence around home (1e-5 deg ~ 1 m)."""
    return 200.0 - 1e5 * math.hypot(s.lat - HOME[0], s.lon - HOME[1])


def _camera(kind: str) -> Callable[[VehicleState], str]:
    def read(s: VehicleState) -> str:
        return f'{kind} captured at {s.lat:.5f},{s.lon:.5f}, altitude {s.altitude_m:.1f} m'
    return read


SENSORS: dict[str, Callable[[VehicleState], str]] = {
    'battery_status': _battery,
    'gps_position': lambda s: f'fix 3D, {s.lat:.6f},{s.lon:.6f}, '
                              f'{408.0 + s.altitude_m:.1f} m AMSL, 14 satellites',
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


def _seen(s: VehicleState) -> tuple[int, int]:
    """People and vehicles in view: the camera sees a scene only from the air."""
    return (2, 1) if s.phase == 'airborne' else (0, 0)


def _esc_temp(s: VehicleState) -> float:
    return 41.0 if s.phase == 'airborne' else 28.0 if s.phase in ('armed', 'landed') else 20.0


# The machine-readable reading of every sensor (what condition watches compare); the keys are
# the fields named in tool_router.common.conditions.QUANTITIES and STATES.
READINGS: dict[str, Callable[[VehicleState], dict[str, Any]]] = {
    'battery_status': lambda s: {'battery_pct': round(s.battery_pct, 3),
                                 'voltage_v': round(13.2 + 3.6 * s.battery_pct / 100.0, 3)},
    'gps_position': lambda s: {'lat': s.lat, 'lon': s.lon, 'amsl_m': 408.0 + s.altitude_m,
                               'home_distance_m': round(distance_m(s.lat, s.lon, *HOME), 2)},
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
                                'on_ground': s.phase != 'airborne'},
    'geofence_monitor': lambda s: {'inside': _fence_margin(s) >= 0.0,
                                   'margin_m': round(_fence_margin(s), 2)},
}


def tool_names() -> list[str]:
    """Every tool the simulator serves (sensors and actuators)."""
    actuators = [name[4:] for name in dir(SimVehicle) if name.startswith('_do_')]
    return sorted(set(SENSORS) | set(actuators))
