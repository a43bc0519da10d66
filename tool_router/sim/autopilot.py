"""A MAVLink-speaking simulated multicopter (a simulator, not a vehicle), on pymavlink.

It behaves like an ArduCopter-style autopilot for the messages the executor's
MAVLink link uses (docs/MAVLINK.md):

* sends HEARTBEAT (1 Hz; ArduCopter custom modes, armed flag), and at 4 Hz
  SYS_STATUS, BATTERY_STATUS, GLOBAL_POSITION_INT, VFR_HUD, ATTITUDE, GPS_RAW_INT,
  EXTENDED_SYS_STATE, MISSION_CURRENT; HOME_POSITION and RADIO_STATUS at 1 Hz;
* answers COMMAND_LONG / COMMAND_INT with COMMAND_ACK, refusing what a real
  autopilot refuses: arming below ``min_arm_battery_pct`` (DENIED), take-off while
  disarmed (TEMPORARILY_REJECTED), disarm in the air without the force code
  (DENIED), land/RTL/hold/goto on the ground (TEMPORARILY_REJECTED), gimbal pitch
  out of range (DENIED), unknown commands (UNSUPPORTED); video start is
  acknowledged IN_PROGRESS, then ACCEPTED;
* integrates a state machine at ``rate_hz``: disarmed -> armed on the ground ->
  takeoff (climb) -> flying (move towards the target at cruise speed) ->
  landing / RTL -> landed; battery drains while armed; a stored mission of
  three waypoints around home runs on MISSION_START and ends in LOITER.

Test hooks: :meth:`MavlinkSim.silence` stops every transmission (a lost link),
:attr:`MavlinkSim.force_results` answers a command with a fixed MAV_RESULT.
Run it with ``tool-router sim --mavlink udpout:127.0.0.1:14550``.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tool_router.common.conditions import HOME, distance_m

os.environ.setdefault('MAVLINK20', '1')
from pymavlink import mavutil  # noqa: E402

M = mavutil.mavlink
# ArduCopter custom modes
MODES = {'STABILIZE': 0, 'AUTO': 3, 'GUIDED': 4, 'LOITER': 5, 'RTL': 6, 'LAND': 9}
FORCE_DISARM = 21196.0
EARTH_M_PER_DEG = 111_320.0


@dataclass
class SimState:
    """Everything the simulator tracks."""

    phase: str = 'disarmed'  # disarmed | ground | takeoff | flying | landing | rtl
    mode: str = 'STABILIZE'
    lat: float = HOME[0]
    lon: float = HOME[1]
    alt: float = 0.0  # metres above home
    target_lat: float = HOME[0]
    target_lon: float = HOME[1]
    target_alt: float = 0.0
    heading: float = 90.0
    groundspeed: float = 0.0
    climb: float = 0.0
    cruise_mps: float = 5.0
    battery_pct: float = 100.0
    gimbal_pitch: float = 0.0
    images: int = 0
    recording: bool = False
    payload_attached: bool = True
    terminated: bool = False
    mission_state: int = 2  # MISSION_STATE_NOT_STARTED
    mission_index: int = 0
    commands: list[str] = field(default_factory=list)


class MavlinkSim:
    """The simulated autopilot; :meth:`start` runs it on a thread, :meth:`stop` ends it."""

    def __init__(self, connection: str, *, system: int = 1, component: int = 1,
                 battery_pct: float = 100.0, drain_pct_per_s: float = 0.05,
                 min_arm_battery_pct: float = 20.0, climb_mps: float = 3.0,
                 cruise_mps: float = 5.0, rate_hz: float = 20.0,
                 home: tuple[float, float] = HOME) -> None:
        self.conn = mavutil.mavlink_connection(connection, source_system=system,
                                               source_component=component)
        self.system, self.component = system, component
        self.drain_pct_per_s = drain_pct_per_s
        self.min_arm_battery_pct = min_arm_battery_pct
        self.climb_mps = climb_mps
        self.period = 1.0 / rate_hz
        self.home = home
        self.state = SimState(lat=home[0], lon=home[1], target_lat=home[0], target_lon=home[1],
                              battery_pct=battery_pct, cruise_mps=cruise_mps)
        self.mission = [(home[0] + dy / EARTH_M_PER_DEG,
                         home[1] + dx / (EARTH_M_PER_DEG * math.cos(math.radians(home[0]))), 15.0)
                        for dx, dy in ((30.0, 0.0), (30.0, 30.0), (0.0, 30.0))]
        self.force_results: dict[int, int] = {}
        self.lock = threading.Lock()
        self._silent_until = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._due: list[tuple[float, int, int, int]] = []  # (time, command, result, component)
        self._last = time.monotonic()

    # -- lifecycle ------------------------------------------------------------
    def start(self) -> 'MavlinkSim':
        """Run on a daemon thread."""
        self._thread = threading.Thread(target=self.run, name='mavlink-sim', daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and close the connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        try:
            self.conn.close()
        except OSError:
            pass

    def silence(self, seconds: float) -> None:
        """Send nothing (no heartbeat, no telemetry, no ACK) for ``seconds``."""
        self._silent_until = time.monotonic() + seconds

    def run(self) -> None:
        """Receive, step, transmit until stopped."""
        next_fast = next_slow = 0.0
        while not self._stop.is_set():
            try:
                msg = self.conn.recv_match(blocking=True, timeout=self.period)
            except (OSError, ValueError):
                msg = None
                time.sleep(self.period)
            now = time.monotonic()
            with self.lock:
                if msg is not None:
                    self._handle(msg)
                self._step(now)
                due = [d for d in self._due if d[0] <= now]
                self._due = [d for d in self._due if d[0] > now]
            for _, command, result, comp in due:
                self._ack(command, result, comp)
            if now >= next_fast:
                next_fast = now + 0.25
                self._telemetry(slow=now >= next_slow)
                if now >= next_slow:
                    next_slow = now + 1.0

    # -- physics ----------------------------------------------------------------
    def _step(self, now: float) -> None:
        dt, self._last = max(0.0, now - self._last), now
        s = self.state
        if s.phase != 'disarmed':
            s.battery_pct = max(0.0, s.battery_pct - dt * self.drain_pct_per_s
                                * (1.0 if s.phase == 'ground' else 3.0))
        if s.phase in ('disarmed', 'ground'):
            s.groundspeed = s.climb = 0.0
            return
        if s.phase == 'landing':
            s.target_alt = 0.0
        if s.phase == 'rtl' and self._horizontal_to(self.home) < 1.0:
            s.phase, s.mode = 'landing', 'LAND'
            s.target_lat, s.target_lon = self.home
        if s.phase == 'flying' and s.mission_state == 3:
            wlat, wlon, walt = self.mission[s.mission_index]
            s.target_lat, s.target_lon, s.target_alt = wlat, wlon, walt
            if self._horizontal_to((wlat, wlon)) < 1.0 and abs(s.alt - walt) < 0.5:
                if s.mission_index + 1 < len(self.mission):
                    s.mission_index += 1
                else:
                    s.mission_state, s.mode = 5, 'LOITER'  # MISSION_STATE_COMPLETE
        # vertical
        dz = s.target_alt - s.alt
        step = max(-self.climb_mps * dt, min(self.climb_mps * dt, dz))
        s.alt += step
        s.climb = step / dt if dt else 0.0
        if s.phase == 'takeoff' and abs(s.target_alt - s.alt) < 0.05:
            s.phase = 'flying'
        if s.phase == 'landing' and s.alt <= 0.01:
            s.alt, s.phase, s.mode, s.climb = 0.0, 'ground', 'LAND', 0.0
            return
        # horizontal (not while climbing out)
        if s.phase in ('flying', 'rtl', 'landing') and s.phase != 'takeoff':
            target = self.home if s.phase == 'rtl' else (s.target_lat, s.target_lon)
            dist = self._horizontal_to(target)
            if dist > 0.05:
                move = min(dist, s.cruise_mps * dt)
                coslat = math.cos(math.radians(s.lat))
                dn = (target[0] - s.lat) * EARTH_M_PER_DEG
                de = (target[1] - s.lon) * EARTH_M_PER_DEG * coslat
                s.lat += dn / dist * move / EARTH_M_PER_DEG
                s.lon += de / dist * move / (EARTH_M_PER_DEG * coslat)
                s.heading = math.degrees(math.atan2(de, dn)) % 360.0
                s.groundspeed = move / dt if dt else 0.0
            else:
                s.groundspeed = 0.0

    def _horizontal_to(self, point: tuple[float, float]) -> float:
        return distance_m(self.state.lat, self.state.lon, point[0], point[1])

    # -- commands -----------------------------------------------------------------
    def _handle(self, msg: Any) -> None:
        kind = msg.get_type()
        if kind not in ('COMMAND_LONG', 'COMMAND_INT'):
            return
        if msg.target_system not in (0, self.system):
            return
        params = [msg.param1, msg.param2, msg.param3, msg.param4]
        if kind == 'COMMAND_LONG':
            params += [msg.param5, msg.param6, msg.param7]
        else:
            params += [msg.x / 1e7, msg.y / 1e7, msg.z]
        comp = msg.target_component or self.component
        command = int(msg.command)
        self.state.commands.append(_name(command))
        if command in self.force_results:
            self._ack(command, self.force_results[command], comp)
            return
        result = self._command(command, params)
        if command == M.MAV_CMD_VIDEO_START_CAPTURE and result == M.MAV_RESULT_ACCEPTED:
            self._ack(command, M.MAV_RESULT_IN_PROGRESS, comp)
            self._due.append((time.monotonic() + 0.2, command, result, comp))
            return
        self._ack(command, result, comp)

    def _command(self, command: int, p: list[float]) -> int:
        s = self.state
        airborne = s.phase in ('takeoff', 'flying', 'landing', 'rtl')
        ok, denied = M.MAV_RESULT_ACCEPTED, M.MAV_RESULT_DENIED
        later = M.MAV_RESULT_TEMPORARILY_REJECTED
        if command == M.MAV_CMD_COMPONENT_ARM_DISARM:
            if p[0] >= 0.5:
                if s.phase != 'disarmed':
                    return ok
                if s.terminated:
                    return self._text(denied, 'PreArm: flight terminated, reboot required')
                if s.battery_pct < self.min_arm_battery_pct:
                    return self._text(denied, f'PreArm: battery {s.battery_pct:.0f}% below '
                                              f'{self.min_arm_battery_pct:.0f}%')
                s.phase, s.mode = 'ground', 'GUIDED'
                return ok
            if airborne and p[1] != FORCE_DISARM:
                return self._text(denied, 'Disarm refused: vehicle in the air')
            s.phase, s.alt, s.climb = 'disarmed', 0.0, 0.0
            return ok
        if command == M.MAV_CMD_NAV_TAKEOFF:
            if s.phase == 'disarmed':
                return self._text(later, 'Takeoff refused: arm first')
            if airborne:
                return self._text(M.MAV_RESULT_FAILED, 'Takeoff refused: already flying')
            height = p[6]
            if not height or math.isnan(height) or height <= 0:
                return denied
            s.phase, s.mode, s.target_alt = 'takeoff', 'GUIDED', height
            s.target_lat, s.target_lon, s.mission_state = s.lat, s.lon, 2
            return ok
        if command == M.MAV_CMD_DO_FLIGHTTERMINATION:
            if p[0] >= 0.5:
                s.terminated = True
                s.phase, s.alt, s.groundspeed, s.climb = 'disarmed', 0.0, 0.0, 0.0
            return ok
        if command == M.MAV_CMD_IMAGE_START_CAPTURE:
            s.images += max(1, int(p[2]) if p[2] and not math.isnan(p[2]) else 1)
            return ok
        if command == M.MAV_CMD_VIDEO_START_CAPTURE:
            s.recording = True
            return ok
        if command == M.MAV_CMD_VIDEO_STOP_CAPTURE:
            s.recording = False
            return ok
        if command == M.MAV_CMD_DO_GIMBAL_MANAGER_PITCHYAW:
            if math.isnan(p[0]) or not -90.0 <= p[0] <= 30.0:
                return denied
            s.gimbal_pitch = p[0]
            return ok
        if command == M.MAV_CMD_DO_GRIPPER:
            if not s.payload_attached:
                return self._text(M.MAV_RESULT_FAILED, 'Gripper: nothing attached')
            s.payload_attached = False
            return ok
        if command not in (M.MAV_CMD_NAV_LAND, M.MAV_CMD_NAV_RETURN_TO_LAUNCH,
                           M.MAV_CMD_DO_PAUSE_CONTINUE, M.MAV_CMD_DO_REPOSITION,
                           M.MAV_CMD_MISSION_START, M.MAV_CMD_DO_CHANGE_ALTITUDE,
                           M.MAV_CMD_DO_CHANGE_SPEED, M.MAV_CMD_CONDITION_YAW):
            return M.MAV_RESULT_UNSUPPORTED
        if not airborne:
            return self._text(later, f'{_name(command)} refused: not flying')
        if command == M.MAV_CMD_NAV_LAND:
            s.phase, s.mode, s.mission_state = 'landing', 'LAND', 2
            s.target_lat, s.target_lon = s.lat, s.lon
        elif command == M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            s.phase, s.mode, s.mission_state = 'rtl', 'RTL', 2
        elif command == M.MAV_CMD_DO_PAUSE_CONTINUE:
            s.phase, s.mode, s.mission_state = 'flying', 'LOITER', 2 if p[0] < 0.5 else 3
            s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, s.alt
        elif command == M.MAV_CMD_DO_REPOSITION:
            if s.phase == 'takeoff':
                return self._text(later, 'Reposition refused: still climbing out')
            s.phase, s.mode, s.mission_state = 'flying', 'GUIDED', 2
            s.target_lat, s.target_lon = p[4], p[5]
            if not math.isnan(p[6]):
                s.target_alt = p[6]
        elif command == M.MAV_CMD_MISSION_START:
            s.phase, s.mode, s.mission_state, s.mission_index = 'flying', 'AUTO', 3, 0
        elif command == M.MAV_CMD_DO_CHANGE_ALTITUDE:
            s.target_alt = p[0]
        elif command == M.MAV_CMD_DO_CHANGE_SPEED:
            if p[1] <= 0:
                return denied
            s.cruise_mps = p[1]
        elif command == M.MAV_CMD_CONDITION_YAW:
            s.heading = p[0] % 360.0
        return ok

    def _text(self, result: int, text: str) -> int:
        if time.monotonic() >= self._silent_until:
            self.conn.mav.statustext_send(M.MAV_SEVERITY_WARNING, text.encode()[:50])
        return result

    def _ack(self, command: int, result: int, comp: int) -> None:
        if time.monotonic() < self._silent_until:
            return
        progress = 0 if result == M.MAV_RESULT_IN_PROGRESS else 255
        self.conn.mav.srcComponent = comp
        try:
            self.conn.mav.command_ack_send(command, result, progress, 0, 0, 0)
        finally:
            self.conn.mav.srcComponent = self.component

    # -- telemetry ------------------------------------------------------------------
    def _telemetry(self, slow: bool) -> None:
        if time.monotonic() < self._silent_until:
            return
        with self.lock:
            s = self.state
            armed = s.phase != 'disarmed'
            mav = self.conn.mav
            try:
                if slow:
                    base = M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (
                        M.MAV_MODE_FLAG_SAFETY_ARMED if armed else 0)
                    status = M.MAV_STATE_ACTIVE if armed else M.MAV_STATE_STANDBY
                    mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_ARDUPILOTMEGA,
                                       base, MODES[s.mode], status)
                    mav.home_position_send(int(self.home[0] * 1e7), int(self.home[1] * 1e7),
                                           408_000, 0, 0, 0, [1, 0, 0, 0], 0, 0, 0)
                    mav.radio_status_send(220, 210, 100, 0, 0, 0, 0)
                volts = 13.2 + 3.6 * s.battery_pct / 100.0
                sensors = 0x0020_FFFF
                mav.sys_status_send(sensors, sensors, sensors, 230, int(volts * 1000), 1500,
                                    int(s.battery_pct), 0, 0, 0, 0, 0, 0)
                cells = [int(volts * 1000)] + [65535] * 9
                mav.battery_status_send(0, 0, 3, 2500, cells, 1500, -1, -1, int(s.battery_pct))
                ms = int(time.monotonic() * 1000) & 0xFFFFFFFF
                rad = math.radians(s.heading)
                vn = s.groundspeed * math.cos(rad)
                ve = s.groundspeed * math.sin(rad)
                mav.global_position_int_send(ms, int(s.lat * 1e7), int(s.lon * 1e7),
                                             int((408.0 + s.alt) * 1000), int(s.alt * 1000),
                                             int(vn * 100), int(ve * 100), int(-s.climb * 100),
                                             int(s.heading * 100) % 36000)
                mav.vfr_hud_send(s.groundspeed, s.groundspeed, int(s.heading) % 360,
                                 60 if armed else 0, 408.0 + s.alt, s.climb)
                mav.attitude_send(ms, 0.007, -0.035 if s.groundspeed else 0.002,
                                  math.radians(s.heading if s.heading <= 180 else s.heading - 360),
                                  0.0, 0.0, 0.0)
                mav.gps_raw_int_send(ms * 1000, 3, int(s.lat * 1e7), int(s.lon * 1e7),
                                     int((408.0 + s.alt) * 1000), 80, 120,
                                     int(s.groundspeed * 100), int(s.heading * 100) % 36000, 14)
                landed = (M.MAV_LANDED_STATE_ON_GROUND if s.phase in ('disarmed', 'ground') else
                          M.MAV_LANDED_STATE_TAKEOFF if s.phase == 'takeoff' else
                          M.MAV_LANDED_STATE_LANDING if s.phase == 'landing' else
                          M.MAV_LANDED_STATE_IN_AIR)
                mav.extended_sys_state_send(0, landed)
                mav.mission_current_send(s.mission_index, len(self.mission), s.mission_state)
            except OSError:
                pass  # the peer is not there (yet); keep simulating

    def snapshot(self) -> dict[str, Any]:
        """The state as a dict (tests, logs)."""
        with self.lock:
            data = dict(vars(self.state))
            data['commands'] = list(self.state.commands)
        return data


def _name(command: int) -> str:
    entry = M.enums['MAV_CMD'].get(command)
    return entry.name if entry is not None else str(command)


def run_from_args(args: Any) -> int:
    """Start the simulator and print a status line every 5 s until Ctrl-C or SIGTERM."""
    import signal

    sim = MavlinkSim(args.connection, system=args.system, battery_pct=args.battery,
                     drain_pct_per_s=args.drain, min_arm_battery_pct=args.min_arm_battery)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    sim.start()
    print(f'MAVLink simulator (system {args.system}) on {args.connection}; Ctrl-C stops it',
          flush=True)
    try:
        while not done.wait(5.0):
            s = sim.snapshot()
            print(f"{s['phase']:8} {s['mode']:9} alt {s['alt']:5.1f} m  "
                  f"{s['lat']:.6f},{s['lon']:.6f}  battery {s['battery_pct']:.1f} %  "
                  f"images {s['images']}", flush=True)
    finally:
        sim.stop()
    return 0
