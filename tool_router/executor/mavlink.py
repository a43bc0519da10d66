"""The executor's MAVLink link: commands with COMMAND_ACK, telemetry readings, limits.

:class:`MavlinkLink` owns one pymavlink connection (UDP in/out, TCP or serial).
A receiving thread keeps the latest message of each type from the target
system, tracks its HEARTBEAT and answers waiting commands with their
COMMAND_ACK; it also sends our GCS heartbeat once a second.

:class:`MavlinkDispatcher` is a :class:`~tool_router.executor.dispatch.Dispatcher`
for ``mavlink:NAME`` bindings (names in :mod:`.mavlink_spec`):

* sensors answer from the telemetry cache (``reading: {json}`` like the simulated
  vehicle's services, so condition watches sample them unchanged; :meth:`MavlinkLink.read`
  gives the same dict directly);
* actions: arguments read from the request (:mod:`.arguments`; missing -> refused,
  ``missing_argument``), limits checked (``outside_limits``), heartbeat checked for
  motion commands (``heartbeat_lost``), then COMMAND_LONG / COMMAND_INT and a wait for
  COMMAND_ACK bounded by the smaller of ``ack_timeout_s`` and the call's budget
  (``ack_timeout``); MAV_RESULT is mapped to the traced outcome (``mav_denied``, ...).

No call waits longer than its budget; nothing is queued: each command waits on its
own ACK, so ``emergency_stop`` (flight termination) is sent at once whatever else is
in flight, and even when the heartbeat is lost.
"""
from __future__ import annotations

import math
import os
import queue
import threading
import time
from typing import Any, Callable

from tool_router.executor.arguments import ArgumentError, ToolArguments, extract
from tool_router.common.conditions import distance_m, encode_reading
from tool_router.executor.dispatch import OFF_WORDS, Binding, BindingKind, DispatchResult
from tool_router.executor.sampling import Reading, SensorReadError
from tool_router.executor.mavlink_spec import (
    ACTION_ARGUMENTS,
    ACTIONS,
    MAV_FRAME_GLOBAL_RELATIVE_ALT,
    MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
    MAV_RESULT_IN_PROGRESS,
    MAV_RESULTS,
    MAV_CMD_VIDEO_STOP_CAPTURE,
    SENSORS,
    MavlinkConfig,
)

os.environ.setdefault('MAVLINK20', '1')
from pymavlink import mavutil  # noqa: E402  (MAVLINK20 must be set before the import)

MAV_STATE_NAMES = {0: 'uninit', 1: 'boot', 2: 'calibrating', 3: 'standby', 4: 'active',
                   5: 'critical', 6: 'emergency', 7: 'poweroff', 8: 'terminating'}


class SensorUnavailable(SensorReadError):
    """No fresh telemetry for a reading (a SensorReadError, so watches record why)."""


class MavlinkLink:
    """One connection to one vehicle; thread-safe."""

    def __init__(self, config: MavlinkConfig) -> None:
        self.config = config
        kwargs: dict[str, Any] = {'source_system': config.source_system,
                                  'source_component': config.source_component}
        if config.connection.startswith('/dev/'):
            kwargs['baud'] = config.baud
        self.conn = mavutil.mavlink_connection(config.connection, **kwargs)
        self._send_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._latest: dict[str, tuple[Any, float]] = {}
        self._waiters: dict[int, list[queue.Queue[Any]]] = {}
        self._heartbeat_at: float | None = None
        self._seq: int | None = None
        self._received = 0
        self._lost = 0
        self._streams_requested = False
        self.heartbeat_seen = threading.Event()  # set at the vehicle's first HEARTBEAT
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='mavlink-rx', daemon=True)
        self._thread.start()

    # -- lifecycle -----------------------------------------------------------
    def close(self) -> None:
        """Stop the receiving thread and close the connection."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        try:
            self.conn.close()
        except OSError:
            pass

    def _run(self) -> None:
        next_beat = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_beat:
                next_beat = now + 1.0
                self._send(lambda mav: mav.heartbeat_send(
                    mavutil.mavlink.MAV_TYPE_GCS, mavutil.mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 0))
            try:
                msg = self.conn.recv_match(blocking=True, timeout=0.1)
            except (OSError, ValueError):
                time.sleep(0.05)
                continue
            if msg is not None:
                self._take(msg)

    def _take(self, msg: Any) -> None:
        kind = msg.get_type()
        if kind == 'BAD_DATA' or msg.get_srcSystem() != self.config.target_system:
            return
        now = time.monotonic()
        with self._state_lock:
            seq = msg.get_seq()
            if self._seq is not None:
                self._lost += (seq - self._seq - 1) % 256
            self._seq = seq
            self._received += 1
            if kind == 'HEARTBEAT':
                if msg.type == mavutil.mavlink.MAV_TYPE_GCS:
                    return
                self._heartbeat_at = now
                self.heartbeat_seen.set()
            self._latest[kind] = (msg, now)
            waiters = self._waiters.get(msg.command) if kind == 'COMMAND_ACK' else None
            target = waiters[0] if waiters else None
        if kind == 'HEARTBEAT' and not self._streams_requested:
            self._streams_requested = True  # ArduPilot streams nothing to a silent GCS
            self._send(lambda mav: mav.request_data_stream_send(
                self.config.target_system, self.config.target_component,
                mavutil.mavlink.MAV_DATA_STREAM_ALL, 4, 1))
        if target is not None:
            target.put(msg)

    def _send(self, build: Any) -> None:
        with self._send_lock:
            try:
                build(self.conn.mav)
            except OSError:
                pass  # no peer yet (udpin before the first packet); the ACK wait times out

    # -- state -----------------------------------------------------------------
    def heartbeat_age(self) -> float | None:
        """Seconds since the vehicle's last HEARTBEAT; None when none ever came."""
        with self._state_lock:
            return None if self._heartbeat_at is None else time.monotonic() - self._heartbeat_at

    def link_lost(self) -> bool:
        """No vehicle HEARTBEAT within ``heartbeat_timeout_s``."""
        age = self.heartbeat_age()
        return age is None or age > self.config.heartbeat_timeout_s

    def wait_heartbeat(self, timeout_s: float) -> bool:
        """Wait until the vehicle's heartbeat is seen (True) or ``timeout_s`` passes."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.link_lost():
                return True
            time.sleep(0.02)
        return False

    def latest(self, kind: str) -> Any:
        """The freshest message of a type, or None when missing or stale."""
        with self._state_lock:
            entry = self._latest.get(kind)
        if entry is None or time.monotonic() - entry[1] > self.config.stale_after_s:
            return None
        return entry[0]

    # -- commands -------------------------------------------------------------
    def command(self, command: int, params: list[float], timeout_s: float, *,
                component: int | None = None, frame: int | None = None,
                x: int = 0, y: int = 0) -> tuple[int | None, str]:
        """Send a command, wait for its COMMAND_ACK: (MAV_RESULT or None on timeout, text)."""
        p = (params + [0.0] * 7)[:7]
        waiter: queue.Queue[Any] = queue.Queue()
        target_comp = self.config.target_component if component is None else component
        with self._state_lock:
            self._waiters.setdefault(command, []).append(waiter)
        try:
            if frame is None:
                self._send(lambda mav: mav.command_long_send(
                    self.config.target_system, target_comp, command, 0, *p))
            else:
                self._send(lambda mav: mav.command_int_send(
                    self.config.target_system, target_comp, frame, command, 0, 0,
                    p[0], p[1], p[2], p[3], x, y, p[6]))
            deadline = time.monotonic() + timeout_s
            progress = ''
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    if progress:
                        return MAV_RESULT_IN_PROGRESS, progress
                    return None, f'no COMMAND_ACK within {timeout_s:g} s'
                try:
                    ack = waiter.get(timeout=left)
                except queue.Empty:
                    continue
                if ack.result == MAV_RESULT_IN_PROGRESS:
                    progress = f'in progress ({getattr(ack, "progress", 0)} %)'
                    continue
                return int(ack.result), ''
        finally:
            with self._state_lock:
                self._waiters[command].remove(waiter)

    # -- readings --------------------------------------------------------------
    def read(self, sensor: str) -> dict[str, Any]:
        """The reading of a sensor binding name (``battery``, ``state``, ...) or catalog tool.

        Raises SensorUnavailable when the telemetry it needs is missing or stale.
        """
        name = TOOL_SENSORS.get(sensor, sensor)
        reader = getattr(self, f'_read_{name}', None)
        if reader is None:
            raise SensorUnavailable(f'no MAVLink reading named {sensor!r}')
        values: dict[str, Any] = reader()
        return values

    def _need(self, kind: str) -> Any:
        msg = self.latest(kind)
        if msg is None:
            raise SensorUnavailable(f'no fresh {kind} from system {self.config.target_system}')
        return msg

    def _read_battery(self) -> dict[str, Any]:
        battery = self.latest('BATTERY_STATUS')
        if battery is not None and battery.battery_remaining >= 0:
            cells = [v for v in battery.voltages if v != 65535]
            volts = sum(cells) / 1000.0 if cells else None
            return {'battery_pct': float(battery.battery_remaining), 'voltage_v': volts}
        status = self._need('SYS_STATUS')
        if status.battery_remaining < 0:
            raise SensorUnavailable('the vehicle does not report its battery charge')
        return {'battery_pct': float(status.battery_remaining),
                'voltage_v': status.voltage_battery / 1000.0}

    def _read_position(self) -> dict[str, Any]:
        pos = self._need('GLOBAL_POSITION_INT')
        lat, lon = pos.lat / 1e7, pos.lon / 1e7
        values: dict[str, Any] = {'lat': lat, 'lon': lon, 'amsl_m': pos.alt / 1000.0}
        with self._state_lock:
            entry = self._latest.get('HOME_POSITION')
        if entry is not None:
            home = entry[0]
            values['home_distance_m'] = round(distance_m(lat, lon, home.latitude / 1e7,
                                                         home.longitude / 1e7), 2)
        return values

    def _read_altitude(self) -> dict[str, Any]:
        return {'altitude_m': self._need('GLOBAL_POSITION_INT').relative_alt / 1000.0}

    def _read_attitude(self) -> dict[str, Any]:
        att = self._need('ATTITUDE')
        return {'roll_deg': round(math.degrees(att.roll), 2),
                'pitch_deg': round(math.degrees(att.pitch), 2),
                'yaw_deg': round(math.degrees(att.yaw) % 360.0, 2)}

    def _read_heading(self) -> dict[str, Any]:
        return {'heading_deg': float(self._need('VFR_HUD').heading)}

    def _read_velocity(self) -> dict[str, Any]:
        hud = self._need('VFR_HUD')
        return {'speed_mps': round(hud.groundspeed, 3), 'vertical_mps': round(hud.climb, 3)}

    def _read_gps(self) -> dict[str, Any]:
        gps = self._need('GPS_RAW_INT')
        return {'fix_type': int(gps.fix_type), 'satellites': int(gps.satellites_visible),
                'hdop': gps.eph / 100.0 if gps.eph != 65535 else None}

    def _read_link(self) -> dict[str, Any]:
        age = self.heartbeat_age()
        with self._state_lock:
            total = self._received + self._lost
            loss = 100.0 * self._lost / total if total else 0.0
        values: dict[str, Any] = {'link_lost': self.link_lost(),
                                  'heartbeat_age_s': None if age is None else round(age, 3),
                                  'packet_loss_pct': round(loss, 2)}
        radio = self.latest('RADIO_STATUS')
        if radio is not None:
            values['rssi_dbm'] = round(radio.rssi / 1.9 - 127.0, 1)  # SiK radio scale
        return values

    def _read_state(self) -> dict[str, Any]:
        if self.link_lost():
            raise SensorUnavailable('vehicle heartbeat lost')
        beat = self._need('HEARTBEAT')
        armed = bool(beat.base_mode & mavutil.mavlink.MAV_MODE_FLAG_SAFETY_ARMED)
        pos = self.latest('GLOBAL_POSITION_INT')
        altitude = pos.relative_alt / 1000.0 if pos is not None else None
        ext = self.latest('EXTENDED_SYS_STATE')
        if ext is not None and ext.landed_state:
            on_ground = ext.landed_state == mavutil.mavlink.MAV_LANDED_STATE_ON_GROUND
        else:
            on_ground = not armed or (altitude is not None and altitude < 0.3)
        phase = 'disarmed' if not armed else ('landed' if on_ground else 'airborne')
        values: dict[str, Any] = {'armed': armed, 'mode': mavutil.mode_string_v10(beat),
                                  'on_ground': on_ground, 'phase': phase,
                                  'system_status': MAV_STATE_NAMES.get(beat.system_status, '?'),
                                  'altitude_m': altitude}
        try:
            values['battery_pct'] = self._read_battery()['battery_pct']
        except SensorUnavailable:
            pass
        current = self.latest('MISSION_CURRENT')
        if current is not None and getattr(current, 'mission_state', 0):
            values['mission'] = {2: 'none', 3: 'running', 4: 'paused',
                                 5: 'finished'}.get(current.mission_state, 'none')
        return values

    def _read_health(self) -> dict[str, Any]:
        status = self._need('SYS_STATUS')
        bad = status.onboard_control_sensors_enabled & ~status.onboard_control_sensors_health
        return {'errors': bin(bad & 0xFFFFFFFF).count('1'), 'cpu_load_pct': status.load / 10.0}

    def _read_geofence(self) -> dict[str, Any]:
        fence = self.config.geofence
        pos = self._need('GLOBAL_POSITION_INT')
        if fence.radius_m <= 0:
            return {'inside': True, 'margin_m': None}
        margin = fence.radius_m - distance_m(pos.lat / 1e7, pos.lon / 1e7, fence.lat, fence.lon)
        alt_margin = self.config.max_altitude_m - pos.relative_alt / 1000.0
        margin = min(margin, alt_margin)
        return {'inside': margin >= 0.0, 'margin_m': round(margin, 2)}


# catalog sensor tool -> mavlink sensor name (for MavlinkLink.read with a tool name)
TOOL_SENSORS = {'battery_status': 'battery', 'gps_position': 'position',
                'altitude_sensor': 'altitude', 'attitude_imu': 'attitude',
                'compass_heading': 'heading', 'velocity_estimate': 'velocity',
                'link_quality': 'link', 'vehicle_state': 'state', 'system_health': 'health',
                'geofence_monitor': 'geofence'}


class MavlinkDispatcher:
    """Dispatcher for ``mavlink:`` bindings over one :class:`MavlinkLink`."""

    def __init__(self, link: MavlinkLink) -> None:
        self.link = link
        self.config = link.config

    def dispatch(self, tool: str, binding: Binding, request_id: str, request_text: str,
                 timeout_s: float) -> DispatchResult:
        """Read a sensor or send a command; never waits longer than ``timeout_s``."""
        name = binding.name
        if name in SENSORS:
            try:
                values = self.link.read(name)
            except SensorUnavailable as exc:
                return DispatchResult(False, f'{tool}: {exc.what}', 'no_telemetry')
            shown = ', '.join(f'{k} {v}' for k, v in values.items())
            return DispatchResult(True, encode_reading(f'{name}: {shown}', values))
        action = ACTIONS.get(name)
        if action is None:
            return DispatchResult(False, f'unknown mavlink binding {name!r}', 'internal_error')
        args = ToolArguments()
        if name in ACTION_ARGUMENTS:
            try:
                args = extract(ACTION_ARGUMENTS[name], request_text)
            except ArgumentError as exc:
                return DispatchResult(False, f'refused, nothing sent: {exc.what}'
                                      + (f' ({exc.hint})' if exc.hint else ''),
                                      'missing_argument')
        if action.motion and self.link.link_lost():
            age = self.link.heartbeat_age()
            seen = 'never seen' if age is None else f'last seen {age:.1f} s ago'
            return DispatchResult(False, f'refused, nothing sent: vehicle heartbeat lost '
                                         f'({seen}); motion commands are blocked',
                                  'heartbeat_lost')
        try:
            params, extra, summary = self._build(name, args, request_text)
        except LimitError as exc:
            return DispatchResult(False, f'refused, nothing sent: {exc}', 'outside_limits')
        budget = min(self.config.ack_timeout_s, timeout_s)
        command = extra.pop('command', action.command)
        result, note = self.link.command(int(command), params, budget, **extra)
        label = f'{_command_name(int(command))}{summary}'
        if result is None:
            return DispatchResult(False, f'{label}: {note}', 'ack_timeout')
        word, failure = MAV_RESULTS.get(result, (f'result {result}', 'mav_failed'))
        if failure:
            return DispatchResult(False, f'{label}: {word} by the vehicle', failure)
        return DispatchResult(True, f'{label}: {word}' + (f', {note}' if note else ''))

    def _build(self, name: str, args: ToolArguments,
               text: str) -> tuple[list[float], dict[str, Any], str]:
        c = self.config
        nan = math.nan
        if name == 'arm':
            return [1.0], {}, ' arm'
        if name == 'disarm':
            return [0.0], {}, ' disarm'
        if name == 'takeoff':
            height = args.height_m if args.height_m is not None else c.default_takeoff_m
            _check_altitude(height, c, 'take-off height', low=0.5)
            said = '' if args.height_m is not None else ' (default height)'
            return [0, 0, 0, nan, nan, nan, height], {}, f' to {height:g} m{said}'
        if name == 'precision_land':
            return [0, 2.0, 0, nan, nan, nan, nan], {}, ' (precision)'
        if name in ('land', 'rtl', 'mission_start'):
            return [0.0] * 7 if name != 'land' else [0, 0, 0, nan, nan, nan, nan], {}, ''
        if name == 'hold':
            return [0.0], {}, ' (pause: hold position)'
        if name == 'set_altitude':
            assert args.altitude_m is not None
            _check_altitude(args.altitude_m, c, 'target altitude')
            return [args.altitude_m, float(MAV_FRAME_GLOBAL_RELATIVE_ALT)], {}, \
                f' to {args.altitude_m:g} m'
        if name == 'set_speed':
            assert args.speed_mps is not None
            if args.speed_mps > c.max_speed_mps:
                raise LimitError(f'speed {args.speed_mps:g} m/s is above max_speed_mps '
                                 f'{c.max_speed_mps:g}')
            return [1.0, args.speed_mps, -1.0], {}, f' to {args.speed_mps:g} m/s'
        if name == 'set_heading':
            assert args.heading_deg is not None
            return [args.heading_deg, 30.0, 0.0, 0.0], {}, f' to {args.heading_deg:g} deg'
        if name == 'goto':
            assert args.lat is not None and args.lon is not None
            fence = c.geofence
            if fence.radius_m > 0:
                far = distance_m(args.lat, args.lon, fence.lat, fence.lon)
                if far > fence.radius_m:
                    raise LimitError(f'{args.lat:.6f},{args.lon:.6f} is {far:.0f} m from the '
                                     f'geofence centre (radius {fence.radius_m:g} m)')
            altitude = args.altitude_m
            if altitude is None:
                pos = self.link.latest('GLOBAL_POSITION_INT')
                if pos is None:
                    raise LimitError('no altitude given and no position telemetry to keep '
                                     'the current one')
                altitude = max(pos.relative_alt / 1000.0, c.min_altitude_m)
            _check_altitude(altitude, c, 'target altitude')
            return ([-1.0, 1.0, 0.0, nan, 0.0, 0.0, altitude],
                    {'frame': MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
                     'x': int(round(args.lat * 1e7)), 'y': int(round(args.lon * 1e7))},
                    f' to {args.lat:.6f},{args.lon:.6f} at {altitude:g} m')
        if name == 'terminate':
            return [1.0], {}, ''
        if name == 'photo':
            return [0, 0, 1.0, 0], {'component': c.camera_component}, ' (one image)'
        if name == 'video':
            if OFF_WORDS.search(text):
                return [0.0], {'component': c.camera_component,
                               'command': MAV_CMD_VIDEO_STOP_CAPTURE}, ' (stop)'
            return [0.0, 0.0], {'component': c.camera_component}, ' (start)'
        if name == 'gimbal':
            assert args.pitch_deg is not None
            return [args.pitch_deg, nan, nan, nan, 0.0], {}, f' pitch {args.pitch_deg:g} deg'
        if name == 'release':
            return [1.0, 0.0], {}, ' (release)'
        raise LimitError(f'no command built for {name!r}')


class LimitError(Exception):
    """A command outside the configured limits (or without what it needs); nothing is sent."""


def _check_altitude(value: float, c: MavlinkConfig, what: str, low: float | None = None) -> None:
    lowest = c.min_altitude_m if low is None else low
    if value > c.max_altitude_m:
        raise LimitError(f'{what} {value:g} m is above max_altitude_m {c.max_altitude_m:g}')
    if value < lowest:
        raise LimitError(f'{what} {value:g} m is below {lowest:g} m')


def _command_name(command: int) -> str:
    entry = mavutil.mavlink.enums['MAV_CMD'].get(command)
    return entry.name if entry is not None else f'MAV_CMD {command}'


class MavlinkSampler:
    """Typed readings from the link's telemetry for condition watches (no text round trip)."""

    def __init__(self, link: MavlinkLink, clock: Callable[[], float] = time.time) -> None:
        self.link = link
        self._clock = clock

    def read(self, sensor: str) -> Reading:
        """The reading of a catalog sensor tool; SensorUnavailable when telemetry is missing."""
        values = self.link.read(sensor)
        name = TOOL_SENSORS.get(sensor, sensor)
        return Reading(sensor=sensor, values=values, stamp=self._clock(), source=f'mavlink:{name}')


class KindRouter:
    """A Dispatcher that sends ``mavlink`` bindings to one dispatcher and the rest to another."""

    def __init__(self, mavlink: MavlinkDispatcher, other: Any) -> None:
        self.mavlink = mavlink
        self.other = other

    def dispatch(self, tool: str, binding: Binding, request_id: str, request_text: str,
                 timeout_s: float) -> DispatchResult:
        """Route by binding kind."""
        target = self.mavlink if binding.kind is BindingKind.MAVLINK else self.other
        result: DispatchResult = target.dispatch(tool, binding, request_id, request_text,
                                                 timeout_s)
        return result
