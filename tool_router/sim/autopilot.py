"""A MAVLink-speaking simulated multicopter with ArduCopter's or PX4's rules (a simulator).

``MavlinkSim(connection, autopilot='ardupilot' | 'px4')`` answers a ground station the way
that stack does, for the messages and commands the executor uses -- written from the stacks'
own command handling (docs/MAVLINK.md lists each rule with its source file), so that a ground
station that only works against a lenient vehicle fails here too:

* **ArduCopter** boots in STABILIZE; a user take-off (``NAV_TAKEOFF``, param 7 above home) is
  answered FAILED unless armed, landed and in GUIDED (or LOITER/POSHOLD/ZIGZAG); arming is
  FAILED in RTL, LAND, AUTO and the other modes that do not allow it; ``DO_REPOSITION``
  outside GUIDED is DENIED without the change-mode bit; a vehicle armed and left on the ground
  disarms after ``DISARM_DELAY`` (10 s); LAND and RTL disarm on touchdown and stay in their
  mode; streams are sent only once asked for (``SET_MESSAGE_INTERVAL`` or
  ``REQUEST_DATA_STREAM``);
* **PX4** boots in Hold (AUTO_LOITER); take-off, reposition, land and RTL switch the mode
  themselves; ``NAV_TAKEOFF`` param 7 and ``DO_REPOSITION`` z are read as AMSL whatever the
  frame, and a take-off lower than ``MIS_TAKEOFF_ALT`` (2.5 m) above the vehicle climbs to that
  minimum; arming is TEMPORARILY_REJECTED in Return and Land; disarms ``COM_DISARM_LAND``
  (2 s) after touchdown, ``COM_DISARM_PRFLT`` (10 s) after an arm without take-off, and then
  returns to the last mode that allows arming; default streams run from boot;
* both: a camera component (100) with its own HEARTBEAT and sequence answers the camera
  commands; COMMAND_ACKs are addressed to the sender; ``MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN``
  (or :meth:`MavlinkSim.reboot`) restarts boot time, sequence numbers, modes and streams;
  with a signing key the vehicle signs everything and, with ``require_signed``, refuses
  unsigned or wrongly signed messages (except the few each stack accepts unsigned).

Test hooks: :meth:`silence` (the whole vehicle) and :meth:`silence_autopilot` (the camera keeps
beating), :meth:`reboot`, :attr:`force_results` (answer a command with a fixed MAV_RESULT).
Run it with ``tool-router sim --mavlink udpout:127.0.0.1:14550 --autopilot px4``.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tool_router.common.conditions import HOME, distance_m
from tool_router.common.mavlink_signing import install, signing_timestamp

os.environ.setdefault('MAVLINK20', '1')
from pymavlink import mavutil  # noqa: E402

M = mavutil.mavlink
EARTH_M_PER_DEG = 111_320.0
FORCE_DISARM = 21196.0
FORCE_ARM_ARDUPILOT = 2989.0
CAMERA = 100
# pymavlink is not analysed (its types read as Any): the results are ints, said so here
OK: int = M.MAV_RESULT_ACCEPTED
TEMP: int = M.MAV_RESULT_TEMPORARILY_REJECTED
DENIED: int = M.MAV_RESULT_DENIED
UNSUPPORTED: int = M.MAV_RESULT_UNSUPPORTED
FAILED: int = M.MAV_RESULT_FAILED
NO_ACK = -1

# ArduCopter/mode.h Mode::Number (the modes this simulator flies; others are refused)
AC_MODES = {'STABILIZE': 0, 'ALT_HOLD': 2, 'AUTO': 3, 'GUIDED': 4, 'LOITER': 5, 'RTL': 6,
            'LAND': 9, 'POSHOLD': 16, 'BRAKE': 17, 'SMART_RTL': 21}
AC_NO_ARM = {'AUTO', 'RTL', 'LAND', 'BRAKE', 'SMART_RTL'}
AC_USER_TAKEOFF = {'GUIDED', 'LOITER', 'POSHOLD'}  # has_user_takeoff(must_navigate=true)
AC_NEEDS_GPS = {'AUTO', 'GUIDED', 'LOITER', 'RTL', 'POSHOLD', 'BRAKE', 'SMART_RTL'}
# px4_custom_mode.h (main, sub) and ModeUtil/mode_requirements.cpp (prevent arming)
PX4_MODES = {'MANUAL': (1, 0), 'ALTCTL': (2, 0), 'POSCTL': (3, 0), 'STABILIZED': (7, 0),
             'AUTO_TAKEOFF': (4, 2), 'AUTO_LOITER': (4, 3), 'AUTO_MISSION': (4, 4),
             'AUTO_RTL': (4, 5), 'AUTO_LAND': (4, 6), 'AUTO_PRECLAND': (4, 9),
             'TERMINATION': (10, 0)}
PX4_NO_ARM = {'AUTO_RTL', 'AUTO_LAND', 'AUTO_PRECLAND', 'TERMINATION'}
# accepted unsigned while signing is required: ArduPilot GCS_Signing.cpp accept_list,
# PX4 mavlink_sign_control.cpp unsigned_messages
UNSIGNED_OK = {'ardupilot': {M.MAVLINK_MSG_ID_RADIO_STATUS, M.MAVLINK_MSG_ID_RADIO},
               'px4': {M.MAVLINK_MSG_ID_RADIO_STATUS, M.MAVLINK_MSG_ID_ADSB_VEHICLE,
                       M.MAVLINK_MSG_ID_COLLISION}}
# PX4's "normal" MAVLink mode streams these from boot (mavlink_main.cpp), rates in Hz
PX4_DEFAULT_STREAMS = {
    M.MAVLINK_MSG_ID_SYS_STATUS: 1.0, M.MAVLINK_MSG_ID_SYSTEM_TIME: 1.0,
    M.MAVLINK_MSG_ID_GPS_RAW_INT: 1.0, M.MAVLINK_MSG_ID_ATTITUDE: 4.0,
    M.MAVLINK_MSG_ID_GLOBAL_POSITION_INT: 4.0, M.MAVLINK_MSG_ID_VFR_HUD: 4.0,
    M.MAVLINK_MSG_ID_BATTERY_STATUS: 0.5, M.MAVLINK_MSG_ID_EXTENDED_SYS_STATE: 1.0,
    M.MAVLINK_MSG_ID_HOME_POSITION: 0.5, M.MAVLINK_MSG_ID_MISSION_CURRENT: 1.0,
}
ALL_STREAMS = set(PX4_DEFAULT_STREAMS) | {M.MAVLINK_MSG_ID_RADIO_STATUS}
AUTOPILOT_IDS = {'ardupilot': M.MAV_AUTOPILOT_ARDUPILOTMEGA, 'px4': M.MAV_AUTOPILOT_PX4}


@dataclass
class SimState:
    """Everything the simulator tracks (``alt`` is metres above home)."""

    mode: str = 'STABILIZE'
    armed: bool = False
    landed: bool = True
    lat: float = HOME[0]
    lon: float = HOME[1]
    alt: float = 0.0
    target_lat: float = HOME[0]
    target_lon: float = HOME[1]
    target_alt: float = 0.0
    takeoff_alt: float | None = None  # an accepted take-off not yet flown (above home)
    rtl_stage: str = ''  # climb | return | descend
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
    home_set: bool = False
    gps_ok: bool = True  # a test's fault: False reports no fix (GPS_RAW_INT fix_type 0)
    satellites: int = 14  # GPS_RAW_INT satellites_visible ("if sats < 8": a test lowers it)
    taken_off: bool = False  # since the last arm
    armed_at: float = 0.0
    landed_at: float = 0.0
    mission_state: int = 2  # MISSION_STATE_NOT_STARTED
    mission_index: int = 0
    after_disarm: str = 'AUTO_LOITER'  # PX4: the mode a disarm returns to
    boots: int = 1
    refused: int = 0  # messages dropped for their signature
    commands: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    photos: list[tuple[float, float, float]] = field(default_factory=list)  # lat, lon, alt


class MavlinkSim:
    """The simulated vehicle; :meth:`start` runs it on a thread, :meth:`stop` ends it."""

    def __init__(self, connection: str, *, autopilot: str = 'ardupilot', system: int = 1,
                 component: int = 1, battery_pct: float = 100.0, drain_pct_per_s: float = 0.05,
                 min_arm_battery_pct: float = 20.0, climb_mps: float = 3.0,
                 cruise_mps: float = 5.0, land_mps: float | None = None, rate_hz: float = 20.0,
                 home: tuple[float, float] = HOME, home_amsl_m: float = 488.0,
                 disarm_delay_s: float = 10.0, land_disarm_s: float = 2.0,
                 rtl_alt_m: float | None = None, min_takeoff_m: float = 2.5,
                 camera: bool = True, legacy_streams: bool = False, gps_delay_s: float = 0.5,
                 signing_key: bytes | None = None, require_signed: bool = False) -> None:
        if autopilot not in AUTOPILOT_IDS:
            raise ValueError(f'autopilot {autopilot!r}: ardupilot or px4')
        self.autopilot = autopilot
        self.px4 = autopilot == 'px4'
        self.conn = mavutil.mavlink_connection(connection, source_system=system,
                                               source_component=component)
        self.system, self.component = system, component
        self.mav = self.conn.mav
        self.cam = mavutil.mavlink.MAVLink(self.conn, srcSystem=system, srcComponent=CAMERA) \
            if camera else None
        self.drain_pct_per_s = drain_pct_per_s
        self.min_arm_battery_pct = min_arm_battery_pct
        self.climb_mps = climb_mps
        self.land_mps = land_mps if land_mps is not None else (0.7 if self.px4 else 0.5)
        self.period = 1.0 / rate_hz
        self.home = home
        self.home_amsl = home_amsl_m
        self.disarm_delay_s = disarm_delay_s  # ArduCopter DISARM_DELAY / PX4 COM_DISARM_PRFLT
        self.land_disarm_s = land_disarm_s  # PX4 COM_DISARM_LAND
        self.rtl_alt = rtl_alt_m if rtl_alt_m is not None else (60.0 if self.px4 else 15.0)
        self.min_takeoff_m = min_takeoff_m  # PX4 MIS_TAKEOFF_ALT
        self.legacy_streams = legacy_streams
        self.gps_delay_s = gps_delay_s
        self.signing_key = signing_key
        self.require_signed = require_signed
        self.state = SimState(lat=home[0], lon=home[1], target_lat=home[0], target_lon=home[1],
                              battery_pct=battery_pct, cruise_mps=cruise_mps,
                              mode=self._boot_mode())
        self.mission = [(home[0] + dy / EARTH_M_PER_DEG,
                         home[1] + dx / (EARTH_M_PER_DEG * math.cos(math.radians(home[0]))), 15.0)
                        for dx, dy in ((30.0, 0.0), (30.0, 30.0), (0.0, 30.0))]
        self.force_results: dict[int, int] = {}
        self.lock = threading.RLock()
        self._silent_until = 0.0
        self._autopilot_silent_until = 0.0
        self._down_until = 0.0  # rebooting
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._due: list[tuple[float, int, int, int, int, int]] = []
        self._last = time.monotonic()
        self._boot_at = self._last
        self._intervals: dict[int, float] = {}
        self._next_send: dict[int, float] = {}
        self._next_beat = 0.0
        self._heartbeat_now = False
        self._send_now: set[int] = set()
        self._setup_signing()
        self._boot_streams()

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
        """Send nothing (no heartbeat, no telemetry, no ACK, no camera) for ``seconds``."""
        self._silent_until = time.monotonic() + seconds

    def silence_autopilot(self, seconds: float) -> None:
        """The autopilot sends nothing for ``seconds``; the camera component keeps beating."""
        self._autopilot_silent_until = time.monotonic() + seconds

    def reboot(self, down_s: float = 1.5) -> None:
        """Restart: silent for ``down_s``, then booted afresh (disarmed, boot mode, no streams)."""
        with self.lock:
            self._down_until = time.monotonic() + down_s
            s = self.state
            s.armed, s.landed, s.alt, s.climb, s.groundspeed = False, True, 0.0, 0.0, 0.0
            s.takeoff_alt, s.rtl_stage, s.taken_off, s.home_set = None, '', False, False
            s.mode, s.after_disarm, s.terminated = self._boot_mode(), 'AUTO_LOITER', False
            s.mission_state, s.mission_index = 2, 0
            s.boots += 1
            self._due.clear()

    def _finish_boot(self, now: float) -> None:
        self._down_until = 0.0
        self._boot_at = now
        self.mav.seq = 0
        if self.cam is not None:
            self.cam.seq = 0
        self._setup_signing()
        self._boot_streams()

    def _boot_mode(self) -> str:
        return 'AUTO_LOITER' if self.px4 else 'STABILIZE'

    def _boot_streams(self) -> None:
        self._intervals = {} if not self.px4 else {k: 1.0 / v
                                                   for k, v in PX4_DEFAULT_STREAMS.items()}
        self._next_send = {}

    def _setup_signing(self) -> None:
        if self.signing_key is None:
            return
        allowed = UNSIGNED_OK[self.autopilot]

        def accept_unsigned(mav: Any, msgid: int) -> bool:
            if not self.require_signed or msgid in allowed:
                return True
            self.state.refused += 1
            return False

        # the signing clock is wall time, so it never goes back across a reboot
        install(self.mav, self.signing_key, sign_outgoing=True, link_id=0,
                accept_unsigned=accept_unsigned)
        if self.cam is not None:
            self.cam.signing.secret_key = self.signing_key
            self.cam.signing.sign_outgoing = True
            self.cam.signing.link_id = 0
            self.cam.signing.timestamp = max(self.cam.signing.timestamp, signing_timestamp())

    def run(self) -> None:
        """Receive, step, transmit until stopped."""
        while not self._stop.is_set():
            try:
                msg = self.conn.recv_match(blocking=True, timeout=self.period)
            except (OSError, ValueError):
                msg = None
                time.sleep(self.period)
            now = time.monotonic()
            with self.lock:
                if self._down_until:
                    if now < self._down_until:
                        continue
                    self._finish_boot(now)
                if msg is not None:
                    self._handle(msg)
                self._step(now)
                due = [d for d in self._due if d[0] <= now]
                self._due = [d for d in self._due if d[0] > now]
                for _, command, result, comp, to_sys, to_comp in due:
                    self._ack(command, result, comp, to_sys, to_comp)
                self._transmit(now)

    def _silent(self, component: int) -> bool:
        now = time.monotonic()
        if now < self._silent_until or self._down_until:
            return True
        return component != CAMERA and now < self._autopilot_silent_until

    def _text(self, result: int, text: str) -> int:
        self.state.texts.append(text)
        if not self._silent(self.component):
            try:
                self.mav.statustext_send(M.MAV_SEVERITY_WARNING, text.encode()[:50])
            except OSError:
                pass
        return result

    # -- physics ----------------------------------------------------------------
    def _step(self, now: float) -> None:
        dt, self._last = max(0.0, now - self._last), now
        s = self.state
        if not s.home_set and now - self._boot_at >= self.gps_delay_s:
            s.home_set = True  # GPS lock: home is where the vehicle stands
        if s.armed:
            s.battery_pct = max(0.0, s.battery_pct - dt * self.drain_pct_per_s
                                * (1.0 if s.landed else 3.0))
        if not s.armed:
            s.groundspeed = 0.0
            if s.alt > 0.0:  # disarmed in the air (termination): it falls
                s.alt = max(0.0, s.alt - 10.0 * dt)
                s.climb = -10.0
            else:
                s.climb, s.landed = 0.0, True
            return
        self._navigate(now)
        self._move(dt)
        self._after_move(now)

    def _navigate(self, now: float) -> None:
        """Set the target from the mode (and end take-offs, RTL stages, missions)."""
        s = self.state
        if s.landed and s.takeoff_alt is None:  # on the ground only a take-off lifts it
            s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, 0.0
            return
        if s.mode in ('RTL', 'AUTO_RTL'):
            home_dist = distance_m(s.lat, s.lon, *self.home)
            if s.rtl_stage == '':
                s.rtl_stage = 'climb' if s.alt < self.rtl_alt - 0.1 else 'return'
            if s.rtl_stage == 'climb':
                s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, self.rtl_alt
                if s.alt >= self.rtl_alt - 0.1:
                    s.rtl_stage = 'return'
            if s.rtl_stage == 'return':
                s.target_lat, s.target_lon = self.home
                s.target_alt = max(s.alt, 0.0)
                if home_dist < 0.5:
                    s.rtl_stage = 'descend'
            if s.rtl_stage == 'descend':
                s.target_lat, s.target_lon, s.target_alt = self.home[0], self.home[1], 0.0
        elif s.mode in ('LAND', 'AUTO_LAND', 'AUTO_PRECLAND'):
            s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, 0.0
        elif s.takeoff_alt is not None and s.mode in ('GUIDED', 'AUTO_TAKEOFF', 'LOITER',
                                                      'POSHOLD', 'ALT_HOLD', 'AUTO_MISSION'):
            s.target_alt = s.takeoff_alt
            if s.alt >= s.takeoff_alt - 0.05:
                s.takeoff_alt = None
                s.target_lat, s.target_lon = s.lat, s.lon
                if s.mode == 'AUTO_TAKEOFF':  # PX4: the take-off ends in Hold
                    s.mode = 'AUTO_LOITER'
        elif s.mode in ('AUTO', 'AUTO_MISSION') and s.mission_state == 3 and not s.landed:
            wlat, wlon, walt = self.mission[s.mission_index]
            s.target_lat, s.target_lon, s.target_alt = wlat, wlon, walt
            if distance_m(s.lat, s.lon, wlat, wlon) < 1.0 and abs(s.alt - walt) < 0.5:
                if s.mission_index + 1 < len(self.mission):
                    s.mission_index += 1
                else:
                    s.mission_state = 5  # MISSION_STATE_COMPLETE
                    if self.px4:
                        s.mode = 'AUTO_LOITER'
        elif s.mode in ('GUIDED', 'AUTO_LOITER', 'AUTO', 'AUTO_MISSION'):
            pass  # fly to (or hold at) the target already set
        else:  # STABILIZE, ALT_HOLD, LOITER, POSHOLD, BRAKE, POSCTL...: no pilot, so hold
            s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, s.alt

    def _move(self, dt: float) -> None:
        s = self.state
        if s.landed and s.target_alt <= 0.0:
            s.groundspeed = s.climb = 0.0
            return
        dz = s.target_alt - s.alt
        landing = s.mode in ('LAND', 'AUTO_LAND', 'AUTO_PRECLAND') or s.rtl_stage == 'descend'
        if dz < 0 and landing:
            rate = self.land_mps if s.alt < 10.0 else max(self.land_mps, self.climb_mps)
        else:
            rate = self.climb_mps
        step = max(-rate * dt, min(rate * dt, dz))
        s.alt += step
        s.climb = step / dt if dt else 0.0
        if s.alt > 0.2:
            s.landed = False
            s.taken_off = True
        vertical_only = s.takeoff_alt is not None or s.rtl_stage == 'climb'
        dist = distance_m(s.lat, s.lon, s.target_lat, s.target_lon)
        if dist > 0.05 and not vertical_only and not s.landed:
            move = min(dist, s.cruise_mps * dt)
            coslat = math.cos(math.radians(s.lat))
            dn = (s.target_lat - s.lat) * EARTH_M_PER_DEG
            de = (s.target_lon - s.lon) * EARTH_M_PER_DEG * coslat
            s.lat += dn / dist * move / EARTH_M_PER_DEG
            s.lon += de / dist * move / (EARTH_M_PER_DEG * coslat)
            s.heading = math.degrees(math.atan2(de, dn)) % 360.0
            s.groundspeed = move / dt if dt else 0.0
        else:
            s.groundspeed = 0.0

    def _after_move(self, now: float) -> None:
        """Touchdown, and the disarms that follow it (or an arm without a take-off)."""
        s = self.state
        if s.alt <= 0.01 and s.target_alt <= 0.0 and not s.landed and s.taken_off:
            s.alt, s.landed, s.climb, s.landed_at = 0.0, True, 0.0, now
            if s.mode in ('RTL', 'LAND'):  # ArduCopter disarms on touchdown in LAND / RTL
                self._disarm('landed')
        if not s.landed or not s.armed:
            return
        if self.px4:
            if s.taken_off and now - s.landed_at >= self.land_disarm_s:
                self._disarm('landing')  # COM_DISARM_LAND
            elif not s.taken_off and s.takeoff_alt is None and \
                    now - s.armed_at >= self.disarm_delay_s:
                self._disarm('auto preflight disarming')  # COM_DISARM_PRFLT
        elif s.takeoff_alt is None and now - max(s.armed_at, s.landed_at) >= self.disarm_delay_s:
            self._disarm('DISARM_DELAY')  # ArduCopter motors.cpp auto_disarm_check

    def _disarm(self, why: str) -> None:
        s = self.state
        s.armed, s.takeoff_alt, s.rtl_stage = False, None, ''
        s.climb = s.groundspeed = 0.0
        self._text(OK, f'Disarmed by {why}' if self.px4 else f'Disarming motors ({why})')
        if self.px4 and s.mode != 'TERMINATION':
            s.mode = s.after_disarm  # UserModeIntention::onDisarm

    # -- receiving ------------------------------------------------------------------
    def _handle(self, msg: Any) -> None:
        kind = msg.get_type()
        if kind == 'BAD_DATA':
            return
        if kind == 'SETUP_SIGNING':
            self._setup_signing_message(msg)
            return
        if kind == 'REQUEST_DATA_STREAM':
            if not self.px4 and msg.target_system in (0, self.system):
                rate = float(msg.req_message_rate) if msg.start_stop else 0.0
                for msg_id in ALL_STREAMS:
                    self._set_interval(msg_id, 1.0 / rate if rate > 0 else None)
            return
        if kind == 'PARAM_REQUEST_READ':
            self._param(msg)
            return
        if kind == 'SET_MODE':
            if msg.target_system in (0, self.system):
                custom = int(msg.custom_mode)
                main, sub = ((custom >> 16) & 0xFF, (custom >> 24) & 0xFF) if self.px4 else \
                    (custom, 0)
                result = self._set_mode_command(float(msg.base_mode), float(main), float(sub))
                self._ack(M.MAVLINK_MSG_ID_SET_MODE, result, self.component,
                          msg.get_srcSystem(), msg.get_srcComponent())
            return
        if kind not in ('COMMAND_LONG', 'COMMAND_INT'):
            return
        if msg.target_system not in (0, self.system):
            return
        comp = msg.target_component
        to_sys, to_comp = msg.get_srcSystem(), msg.get_srcComponent()
        command = int(msg.command)
        params = [msg.param1, msg.param2, msg.param3, msg.param4]
        if kind == 'COMMAND_LONG':
            params += [msg.param5, msg.param6, msg.param7]
            frame = None
        else:
            frame = int(msg.frame)
            if msg.x == 0x7ff80000 and msg.y == 0x7ff80000 and self.px4:
                self._ack(command, DENIED, self.component, to_sys, to_comp)  # NaN sent as int
                return
            params += [msg.x / 1e7, msg.y / 1e7, msg.z]
        if comp == CAMERA and self.cam is not None:
            self._camera(command, params, to_sys, to_comp)
            return
        if comp not in (0, self.component):
            return  # not for us (nor for our camera)
        self.state.commands.append(_name(command))
        if command in self.force_results:
            self._ack(command, self.force_results[command], self.component, to_sys, to_comp)
            return
        if command == M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN:
            self._reboot_command(params, to_sys, to_comp)
            return
        result = self._command(command, params, frame, kind)
        if result != NO_ACK:
            self._ack(command, result, self.component, to_sys, to_comp)

    def _setup_signing_message(self, msg: Any) -> None:
        key = bytes(msg.secret_key)
        if not any(key) and not msg.initial_timestamp:
            self.signing_key = None  # all zero: signing off
            self.mav.signing.secret_key = None
            self.mav.signing.sign_outgoing = False
            if self.cam is not None:
                self.cam.signing.secret_key = None
                self.cam.signing.sign_outgoing = False
            return
        self.signing_key = key
        self._setup_signing()

    def _param(self, msg: Any) -> None:
        name = msg.param_id.decode() if isinstance(msg.param_id, bytes) else str(msg.param_id)
        name = name.rstrip('\x00')
        params = ({'MIS_TAKEOFF_ALT': self.min_takeoff_m, 'RTL_RETURN_ALT': self.rtl_alt,
                   'COM_DISARM_LAND': self.land_disarm_s, 'COM_DISARM_PRFLT': self.disarm_delay_s}
                  if self.px4 else
                  {'RTL_ALT': self.rtl_alt * 100.0, 'DISARM_DELAY': self.disarm_delay_s})
        if name in params and not self._silent(self.component):
            self.mav.param_value_send(name.encode(), float(params[name]),
                                      M.MAV_PARAM_TYPE_REAL32, len(params),
                                      list(params).index(name))

    def _reboot_command(self, p: list[float], to_sys: int, to_comp: int) -> None:
        if int(p[0]) == 0 and self.px4:
            self._ack(M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, OK, self.component, to_sys, to_comp)
            return
        if int(p[0]) != 1:
            result = DENIED if self.px4 else UNSUPPORTED
            self._ack(M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, result, self.component, to_sys,
                      to_comp)
            return
        if self.state.armed:  # both refuse to reboot while armed
            self._ack(M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, DENIED if self.px4 else FAILED,
                      self.component, to_sys, to_comp)
            return
        self._ack(M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, OK, self.component, to_sys, to_comp)
        self.reboot()

    def _camera(self, command: int, p: list[float], to_sys: int, to_comp: int) -> None:
        s = self.state
        s.commands.append(_name(command))
        if command in self.force_results:
            self._ack(command, self.force_results[command], CAMERA, to_sys, to_comp)
            return
        if command == M.MAV_CMD_IMAGE_START_CAPTURE:
            s.images += max(1, int(p[2]) if p[2] and not math.isnan(p[2]) else 1)
            s.photos.append((s.lat, s.lon, s.alt))
            result = OK
        elif command == M.MAV_CMD_VIDEO_START_CAPTURE:
            s.recording = True
            self._ack(command, M.MAV_RESULT_IN_PROGRESS, CAMERA, to_sys, to_comp)
            self._due.append((time.monotonic() + 0.2, command, OK, CAMERA, to_sys, to_comp))
            return
        elif command == M.MAV_CMD_VIDEO_STOP_CAPTURE:
            s.recording = False
            result = OK
        else:
            result = UNSUPPORTED
        self._ack(command, result, CAMERA, to_sys, to_comp)

    # -- commands -----------------------------------------------------------------
    def _command(self, command: int, p: list[float], frame: int | None, kind: str) -> int:
        if command == M.MAV_CMD_SET_MESSAGE_INTERVAL:
            if self.legacy_streams and not self.px4:
                return UNSUPPORTED
            interval = p[1]
            if int(p[0]) not in ALL_STREAMS and int(p[0]) != M.MAVLINK_MSG_ID_HEARTBEAT:
                return FAILED
            if interval < 0:
                self._set_interval(int(p[0]), None)
            elif interval == 0:
                default = PX4_DEFAULT_STREAMS.get(int(p[0]))
                self._set_interval(int(p[0]), 1.0 / default if default and self.px4 else None)
            else:
                self._set_interval(int(p[0]), max(interval / 1e6, 0.01))
            return OK
        if command == M.MAV_CMD_REQUEST_MESSAGE:
            msg_id = int(p[0])
            if msg_id == M.MAVLINK_MSG_ID_HOME_POSITION and not self.state.home_set:
                return FAILED
            if msg_id not in ALL_STREAMS:
                return FAILED
            self._next_send[msg_id] = 0.0
            if msg_id not in self._intervals:
                self._send_now.add(msg_id)
            return OK
        if command in (M.MAV_CMD_IMAGE_START_CAPTURE, M.MAV_CMD_VIDEO_START_CAPTURE,
                       M.MAV_CMD_VIDEO_STOP_CAPTURE):
            return UNSUPPORTED  # the camera component answers these, not the autopilot
        if self.px4:
            return self._px4(command, p, frame)
        return self._ardupilot(command, p, frame, kind)

    # ArduCopter: libraries/GCS_MAVLink/GCS_Common.cpp, ArduCopter/GCS_Mavlink.cpp, mode.cpp,
    # takeoff.cpp, AP_Arming_Copter.cpp
    def _ardupilot(self, command: int, p: list[float], frame: int | None, kind: str) -> int:
        s = self.state
        if command == M.MAV_CMD_COMPONENT_ARM_DISARM:
            if p[0] == 1.0:
                if s.armed:
                    return OK
                if s.mode not in AC_MODES or s.mode in AC_NO_ARM:
                    return self._text(FAILED, f'Arm: Mode not armable ({s.mode})')
                if p[1] != FORCE_ARM_ARDUPILOT:
                    if s.mode in AC_NEEDS_GPS and not s.home_set:
                        return self._text(FAILED, 'PreArm: Need Position Estimate')
                    if s.battery_pct < self.min_arm_battery_pct:
                        return self._text(FAILED, f'PreArm: Battery {s.battery_pct:.0f}% below '
                                                  f'{self.min_arm_battery_pct:.0f}%')
                self._arm()
                return OK
            if p[0] == 0.0:
                if not s.armed:
                    return OK
                if not s.landed and p[1] != FORCE_DISARM:
                    return self._text(FAILED, 'Disarm refused: not landed')
                self._disarm('MAVLink')
                return OK
            return UNSUPPORTED
        if command == M.MAV_CMD_DO_SET_MODE:
            return self._set_mode_command(p[0], p[1], p[2])
        if command == M.MAV_CMD_NAV_TAKEOFF:
            if kind == 'COMMAND_INT' and frame != M.MAV_FRAME_GLOBAL_RELATIVE_ALT:
                return DENIED
            must_navigate = p[2] == 0.0
            height = p[6]
            if not s.armed or not s.landed:
                return self._text(FAILED, 'Takeoff refused: ' + ('not armed' if not s.armed
                                                                  else 'already flying'))
            if s.mode not in AC_USER_TAKEOFF and not (s.mode == 'ALT_HOLD' and not must_navigate):
                return self._text(FAILED, f'Takeoff refused in {s.mode}')
            if math.isnan(height) or height <= s.alt:
                return FAILED  # can't take off downwards
            self._start_takeoff(height)
            return OK
        if command == M.MAV_CMD_DO_REPOSITION:
            if kind != 'COMMAND_INT':
                return UNSUPPORTED  # ArduCopter takes DO_REPOSITION as COMMAND_INT only
            change_modes = int(p[1]) & 1
            if s.mode != 'GUIDED' and not change_modes:
                return DENIED
            if not (-90 <= p[4] <= 90 and -180 <= p[5] <= 180):
                return DENIED
            rel = self._relative(frame, p[6])
            if rel is None:
                return DENIED
            if s.mode != 'GUIDED':
                result = self._set_mode('GUIDED')
                if result != OK:
                    return FAILED
            s.target_lat, s.target_lon, s.target_alt = p[4], p[5], rel
            s.takeoff_alt = None
            return OK
        if command == M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            return self._set_mode('RTL')
        if command == M.MAV_CMD_NAV_LAND:
            return self._set_mode('LAND')
        if command == M.MAV_CMD_DO_PAUSE_CONTINUE:
            if int(p[0]) not in (0, 1):
                return DENIED
            if s.mode not in ('GUIDED', 'AUTO'):
                return self._text(FAILED, 'Failed to pause' if int(p[0]) == 0
                                  else 'Failed to resume')
            if int(p[0]) == 0:
                s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, s.alt
                if s.mode == 'AUTO':
                    s.mission_state = 4  # paused
            elif s.mode == 'AUTO':
                s.mission_state = 3
            return OK
        if command == M.MAV_CMD_MISSION_START:
            if p[0] or p[1]:
                return DENIED
            if s.armed and s.landed:
                return self._text(FAILED, 'Auto: Missing Takeoff Cmd')
            result = self._set_mode('AUTO')
            if result == OK:
                s.mission_state, s.mission_index = 3, 0
            return result
        if command == M.MAV_CMD_CONDITION_YAW:
            if 0.0 <= p[0] <= 360.0 and p[3] in (0.0, 1.0):
                s.heading = (s.heading + p[0] if p[3] == 1.0 else p[0]) % 360.0
                return OK
            return FAILED
        if command == M.MAV_CMD_DO_CHANGE_SPEED:
            if p[1] <= 0:
                return DENIED
            if int(p[0]) in (0, 1):
                s.cruise_mps = p[1]
                return OK
            return OK if int(p[0]) in (2, 3) else DENIED
        if command == M.MAV_CMD_DO_FLIGHTTERMINATION:
            if p[0] > 0.5:
                s.terminated = True
                if s.armed:
                    self._disarm('TERMINATION')
            return OK
        if command == M.MAV_CMD_DO_GIMBAL_MANAGER_PITCHYAW:
            return self._gimbal(p[0])
        if command == M.MAV_CMD_DO_GRIPPER:
            return self._gripper(p)
        if command == M.MAV_CMD_GET_HOME_POSITION:
            return OK if s.home_set else FAILED
        return UNSUPPORTED

    def _set_mode_command(self, base: float, custom: float, sub: float) -> int:
        if self.px4:
            return self._px4_set_mode(base, custom, sub)
        if not int(base) & M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED:
            return DENIED
        name = next((n for n, num in AC_MODES.items() if num == int(custom)), None)
        if name is None:
            return self._text(FAILED, f'Unknown or unsupported mode {int(custom)}')
        return self._set_mode(name)

    def _set_mode(self, name: str) -> int:
        """ArduCopter Copter::set_mode: OK, or FAILED when the mode cannot be entered."""
        s = self.state
        if s.mode == name:
            return OK
        if s.armed:  # checks are skipped while disarmed
            if name in AC_NEEDS_GPS and not s.home_set:
                return self._text(FAILED, f'Mode change to {name} failed: requires position')
            if name == 'AUTO' and s.landed:
                return self._text(FAILED, 'Auto: Missing Takeoff Cmd')
        if name == 'RTL' and not s.home_set:
            return self._text(FAILED, 'Mode change to RTL failed: init failed')
        s.mode, s.rtl_stage = name, ''
        if name != 'GUIDED':
            s.takeoff_alt = None
        if name == 'GUIDED':
            s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, s.alt
        self._heartbeat_now = True  # ArduCopter sends a HEARTBEAT on every mode change
        return OK

    def _relative(self, frame: int | None, z: float) -> float | None:
        """ArduPilot's altitude frames: GLOBAL (AMSL), GLOBAL_RELATIVE_ALT, TERRAIN (flat)."""
        if math.isnan(z):
            return self.state.alt
        if frame in (M.MAV_FRAME_GLOBAL, M.MAV_FRAME_GLOBAL_INT):
            return z - self.home_amsl
        if frame in (M.MAV_FRAME_GLOBAL_RELATIVE_ALT, M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
                     M.MAV_FRAME_GLOBAL_TERRAIN_ALT, M.MAV_FRAME_GLOBAL_TERRAIN_ALT_INT):
            return z
        return None

    # PX4: src/modules/commander/Commander.cpp, navigator/navigator_main.cpp, takeoff.cpp,
    # mavlink/mavlink_receiver.cpp, commander/UserModeIntention.cpp
    def _px4(self, command: int, p: list[float], frame: int | None) -> int:
        s = self.state
        if command == M.MAV_CMD_COMPONENT_ARM_DISARM:
            action = round(p[0])
            if action == 1:
                if s.armed:
                    return OK
                if s.mode in PX4_NO_ARM:  # HealthAndArmingChecks::canArm(nav_state)
                    return self._text(TEMP, f'Arming denied: switch to a mode that allows '
                                            f'arming (now {s.mode})')
                if not s.home_set:
                    return self._text(TEMP, 'Preflight Fail: no global position')
                if s.battery_pct < self.min_arm_battery_pct:
                    return self._text(TEMP, f'Preflight Fail: low battery '
                                            f'({s.battery_pct:.0f}%)')
                self._arm()
                return OK
            if action == 0:
                if s.armed and not s.landed and round(p[1]) != 21196:
                    return self._text(TEMP, 'Disarming denied: not landed')
                if s.armed:
                    self._disarm('external command')
                return OK
            return NO_ACK  # "Unsupported ARM_DISARM param": Commander answers nothing
        if command == M.MAV_CMD_DO_SET_MODE:
            return self._px4_set_mode(p[0], p[1], p[2])
        if command == M.MAV_CMD_NAV_TAKEOFF:
            if not self._px4_change('AUTO_TAKEOFF'):
                return TEMP
            self._px4_takeoff_target(p[6])
            return OK
        if command == M.MAV_CMD_DO_REPOSITION:
            flags = int(p[1])
            if not flags & 1 or flags & ~1:
                return UNSUPPORTED
            if not self._px4_change('AUTO_LOITER'):
                return TEMP
            if s.armed:  # navigator: the setpoint is only taken while armed
                if not (math.isnan(p[4]) or math.isnan(p[5])) and abs(p[4]) <= 90:
                    s.target_lat, s.target_lon = p[4], p[5]
                # z is AMSL whatever the frame (mavlink_receiver copies it into param7)
                s.target_alt = s.alt if math.isnan(p[6]) else p[6] - self.home_amsl
            return OK
        if command == M.MAV_CMD_DO_CHANGE_ALTITUDE:
            if not self._px4_change('AUTO_LOITER'):
                return TEMP
            if s.armed and not math.isnan(p[0]):
                s.target_alt = p[0] - self.home_amsl
            return OK
        if command == M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            return OK if self._px4_change('AUTO_RTL') else TEMP
        if command == M.MAV_CMD_NAV_LAND:
            return OK if self._px4_change('AUTO_LAND') else TEMP
        if command == M.MAV_CMD_MISSION_START:
            if not (-1 <= p[0] < len(self.mission)):
                return DENIED
            if not self._px4_change('AUTO_MISSION'):
                return TEMP
            if not s.armed:
                self._arm()  # PX4 arms on MISSION_START
            s.mission_state, s.mission_index = 3, 0
            s.takeoff_alt = max(self.mission[0][2], self.min_takeoff_m) if s.landed else None
            return OK
        if command == M.MAV_CMD_DO_FLIGHTTERMINATION:
            if p[0] <= 0.5 or not s.armed:
                return DENIED
            s.terminated = True
            s.mode = 'TERMINATION'
            self._disarm('lockdown')
            return OK
        if command == M.MAV_CMD_DO_CHANGE_SPEED:
            if p[1] > 0:
                s.cruise_mps = p[1]
            return OK
        if command == M.MAV_CMD_DO_GIMBAL_MANAGER_PITCHYAW:
            return self._gimbal(p[0])
        if command == M.MAV_CMD_DO_GRIPPER:
            return self._gripper(p)
        return UNSUPPORTED  # Commander's default case (DO_PAUSE_CONTINUE, CONDITION_YAW, ...)

    def _px4_set_mode(self, base: float, main: float, sub: float) -> int:
        if not int(base) & M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED:
            return OK  # the base-mode path: nothing this simulator flies changes
        name = next((n for n, (mm, ss) in PX4_MODES.items()
                     if mm == int(main) and (ss == int(sub) or (mm != 4 and ss == 0))), None)
        if name is None or name == 'TERMINATION':
            return self._text(TEMP, 'Unsupported auto mode')
        return OK if self._px4_change(name) else TEMP

    def _px4_change(self, name: str) -> bool:
        """UserModeIntention::change: always while disarmed; armed, the mode must be runnable."""
        s = self.state
        if s.mode == 'TERMINATION':
            return False
        if s.armed and name == 'AUTO_RTL' and not s.home_set:
            self._text(TEMP, 'Switching to Return is currently not possible')
            return False
        if name not in PX4_NO_ARM and name != 'AUTO_TAKEOFF':
            s.after_disarm = name
        if s.mode != name:
            s.rtl_stage = ''
            if name != 'AUTO_TAKEOFF':
                s.takeoff_alt = None
            if name == 'AUTO_LOITER':
                s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, s.alt
        s.mode = name
        return True

    def _px4_takeoff_target(self, param7: float) -> None:
        """Navigator takeoff.cpp: param 7 is AMSL; lower than now + MIS_TAKEOFF_ALT is raised."""
        s = self.state
        current_amsl = self.home_amsl + s.alt
        minimum = current_amsl + self.min_takeoff_m
        wanted = minimum if math.isnan(param7) or not s.home_set else param7
        if wanted < minimum:
            if wanted < minimum - 0.1:
                self._text(OK, f'Using minimum takeoff altitude: {self.min_takeoff_m:.2f} m')
            wanted = minimum
        if wanted < current_amsl:
            wanted = current_amsl
            self._text(OK, 'Already higher than takeoff altitude')
        s.takeoff_alt = wanted - self.home_amsl
        s.target_lat, s.target_lon = s.lat, s.lon

    # -- both ------------------------------------------------------------------------
    def _arm(self) -> None:
        s = self.state
        s.armed, s.taken_off, s.armed_at = True, False, time.monotonic()
        s.landed_at = s.armed_at
        s.target_lat, s.target_lon, s.target_alt = s.lat, s.lon, s.alt
        self.home = (s.lat, s.lon)  # home is set where the vehicle arms
        s.mission_state = 2 if s.mode not in ('AUTO_MISSION',) else s.mission_state

    def _start_takeoff(self, height: float) -> None:
        s = self.state
        s.takeoff_alt = height
        s.target_lat, s.target_lon = s.lat, s.lon

    def _gimbal(self, pitch: float) -> int:
        if math.isnan(pitch) or not -90.0 <= pitch <= 30.0:
            return DENIED
        self.state.gimbal_pitch = pitch
        return OK

    def _gripper(self, p: list[float]) -> int:
        s = self.state
        if int(p[1]) == 0:  # release
            if not s.payload_attached:
                return self._text(FAILED, 'Gripper: nothing attached')
            s.payload_attached = False
            return OK
        if int(p[1]) == 1:
            s.payload_attached = True
            return OK
        return FAILED

    def _ack(self, command: int, result: int, comp: int, to_sys: int, to_comp: int) -> None:
        if self._silent(comp):
            return
        mav = self.cam if comp == CAMERA and self.cam is not None else self.mav
        progress = 0 if result == M.MAV_RESULT_IN_PROGRESS else 255
        try:
            mav.command_ack_send(command, result, progress, 0, to_sys, to_comp)
        except OSError:
            pass

    # -- telemetry ------------------------------------------------------------------
    def _set_interval(self, msg_id: int, interval: float | None) -> None:
        if interval is None:
            self._intervals.pop(msg_id, None)
        else:
            self._intervals[msg_id] = interval
        self._next_send.pop(msg_id, None)

    def _transmit(self, now: float) -> None:
        if now >= self._next_beat or self._heartbeat_now:
            self._next_beat = now + 1.0
            self._heartbeat_now = False
            self._heartbeats()
        if self._silent(self.component):
            return
        due = [m for m, interval in self._intervals.items()
               if now >= self._next_send.get(m, 0.0)]
        for msg_id in due:
            self._next_send[msg_id] = now + self._intervals[msg_id]
        due += [m for m in self._send_now if m not in due]
        self._send_now = set()
        for msg_id in due:
            try:
                self._send_message(msg_id, now)
            except OSError:
                pass  # the peer is not there (yet); keep simulating

    def _heartbeats(self) -> None:
        s = self.state
        if not self._silent(self.component):
            if self.px4:
                main, sub = PX4_MODES[s.mode]
                custom = (main << 16) | (sub << 24)
            else:
                custom = AC_MODES[s.mode]
            base = M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (M.MAV_MODE_FLAG_SAFETY_ARMED
                                                          if s.armed else 0)
            status = M.MAV_STATE_ACTIVE if s.armed else M.MAV_STATE_STANDBY
            try:
                self.mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, AUTOPILOT_IDS[self.autopilot],
                                        base, custom, status)
            except OSError:
                pass
        if self.cam is not None and not self._silent(CAMERA):
            try:
                self.cam.heartbeat_send(M.MAV_TYPE_CAMERA, M.MAV_AUTOPILOT_INVALID, 0, 0,
                                        M.MAV_STATE_ACTIVE)
            except OSError:
                pass

    def _send_message(self, msg_id: int, now: float) -> None:
        s = self.state
        mav = self.mav
        boot_ms = int((now - self._boot_at) * 1000) & 0xFFFFFFFF
        amsl = self.home_amsl + s.alt
        volts = 13.2 + 3.6 * s.battery_pct / 100.0
        if msg_id == M.MAVLINK_MSG_ID_SYS_STATUS:
            sensors = 0x0020_FFFF
            mav.sys_status_send(sensors, sensors, sensors, 230, int(volts * 1000), 1500,
                                int(s.battery_pct), 0, 0, 0, 0, 0, 0)
        elif msg_id == M.MAVLINK_MSG_ID_SYSTEM_TIME:
            mav.system_time_send(int(time.time() * 1e6), boot_ms)
        elif msg_id == M.MAVLINK_MSG_ID_BATTERY_STATUS:
            cells = [int(volts * 1000)] + [65535] * 9
            mav.battery_status_send(0, 0, 3, 2500, cells, 1500, -1, -1, int(s.battery_pct))
        elif msg_id == M.MAVLINK_MSG_ID_GLOBAL_POSITION_INT:
            if not s.home_set:
                return  # no GPS fix yet: no global position
            rad = math.radians(s.heading)
            vn, ve = s.groundspeed * math.cos(rad), s.groundspeed * math.sin(rad)
            mav.global_position_int_send(boot_ms, int(s.lat * 1e7), int(s.lon * 1e7),
                                         int(amsl * 1000), int(s.alt * 1000), int(vn * 100),
                                         int(ve * 100), int(-s.climb * 100),
                                         int(s.heading * 100) % 36000)
        elif msg_id == M.MAVLINK_MSG_ID_VFR_HUD:
            mav.vfr_hud_send(s.groundspeed, s.groundspeed, int(s.heading) % 360,
                             60 if s.armed else 0, amsl, s.climb)
        elif msg_id == M.MAVLINK_MSG_ID_ATTITUDE:
            mav.attitude_send(boot_ms, 0.007, -0.035 if s.groundspeed else 0.002,
                              math.radians(s.heading if s.heading <= 180 else s.heading - 360),
                              0.0, 0.0, 0.0)
        elif msg_id == M.MAVLINK_MSG_ID_GPS_RAW_INT:
            mav.gps_raw_int_send(boot_ms * 1000, 3 if s.home_set and s.gps_ok else 0,
                                 int(s.lat * 1e7),
                                 int(s.lon * 1e7), int(amsl * 1000), 80, 120,
                                 int(s.groundspeed * 100), int(s.heading * 100) % 36000,
                                 s.satellites)
        elif msg_id == M.MAVLINK_MSG_ID_EXTENDED_SYS_STATE:
            if s.landed:
                landed = M.MAV_LANDED_STATE_ON_GROUND
            elif s.takeoff_alt is not None:
                landed = M.MAV_LANDED_STATE_TAKEOFF
            elif s.climb < -0.1 and s.target_alt <= 0.0:
                landed = M.MAV_LANDED_STATE_LANDING
            else:
                landed = M.MAV_LANDED_STATE_IN_AIR
            mav.extended_sys_state_send(0, landed)
        elif msg_id == M.MAVLINK_MSG_ID_HOME_POSITION:
            if s.home_set:
                mav.home_position_send(int(self.home[0] * 1e7), int(self.home[1] * 1e7),
                                       int(self.home_amsl * 1000), 0, 0, 0, [1, 0, 0, 0],
                                       0, 0, 0)
        elif msg_id == M.MAVLINK_MSG_ID_MISSION_CURRENT:
            # ArduPilot keeps home as mission item 0, so its first waypoint is seq 1; PX4's is 0
            mav.mission_current_send(s.mission_index + (0 if self.px4 else 1), len(self.mission),
                                     s.mission_state)
        elif msg_id == M.MAVLINK_MSG_ID_RADIO_STATUS:
            mav.radio_status_send(220, 210, 100, 0, 0, 0, 0)

    def snapshot(self) -> dict[str, Any]:
        """The state as a dict (tests, logs); ``phase`` summarises armed / landed / flying."""
        with self.lock:
            data = dict(vars(self.state))
            data['commands'] = list(self.state.commands)
            data['texts'] = list(self.state.texts)
            data['photos'] = list(self.state.photos)
            s = self.state
            data['phase'] = ('disarmed' if not s.armed else 'ground' if s.landed else
                             'takeoff' if s.takeoff_alt is not None else
                             'landing' if s.mode in ('LAND', 'AUTO_LAND') or
                             s.rtl_stage == 'descend' else
                             'rtl' if s.mode in ('RTL', 'AUTO_RTL') else 'flying')
            data['amsl'] = self.home_amsl + s.alt
            data['streams'] = sorted(self._intervals)
        return data


def _name(command: int) -> str:
    entry = M.enums['MAV_CMD'].get(command)
    return entry.name if entry is not None else str(command)


def run_from_args(args: Any) -> int:
    """Start the simulator and print a status line every 5 s until Ctrl-C or SIGTERM."""
    import signal

    from tool_router.common.mavlink_signing import read_mavlink_key

    key = read_mavlink_key(args.signing_key) if args.signing_key else None
    sim = MavlinkSim(args.connection, autopilot=args.autopilot, system=args.system,
                     battery_pct=args.battery, drain_pct_per_s=args.drain,
                     min_arm_battery_pct=args.min_arm_battery, home_amsl_m=args.home_amsl,
                     signing_key=key, require_signed=args.require_signed)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    sim.start()
    signing = ' (signed' + (', unsigned refused)' if args.require_signed else ')') if key else ''
    print(f'MAVLink simulator: {"PX4" if sim.px4 else "ArduCopter"} rules, system {args.system}, '
          f'camera component {CAMERA}, on {args.connection}{signing}; Ctrl-C stops it',
          flush=True)
    try:
        while not done.wait(5.0):
            s = sim.snapshot()
            print(f"{s['phase']:8} {s['mode']:12} {'armed' if s['armed'] else 'disarmed':8} "
                  f"alt {s['alt']:5.1f} m ({s['amsl']:.1f} m AMSL)  "
                  f"{s['lat']:.6f},{s['lon']:.6f}  battery {s['battery_pct']:.1f} %  "
                  f"images {s['images']}", flush=True)
    finally:
        sim.stop()
    return 0
