"""The executor's MAVLink link: commands with COMMAND_ACK, telemetry readings, limits.

:class:`MavlinkLink` owns one pymavlink connection (UDP in/out, TCP or serial). A receiving
thread keeps the latest message of each type *from the autopilot component* (the target
system's ``target_component``), and answers waiting commands with their COMMAND_ACK; it also
sends our GCS heartbeat once a second. What it believes comes from the autopilot only:

* the link is alive while the autopilot component's HEARTBEAT (an autopilot type, not a
  GCS, camera or other component) keeps coming; other components of the vehicle (a camera's
  own heartbeat) are listed but never keep the link alive;
* packet loss is counted per (system, component) sequence, and reported for the autopilot;
* a COMMAND_ACK answers a waiting command only when it is for that command, addressed to us
  (our system and component) and sent by the system and component the command went to;
  every other ACK is ignored and counted;
* telemetry streams are requested (``SET_MESSAGE_INTERVAL``, with ``REQUEST_DATA_STREAM``
  as ArduPilot's fallback) at the first HEARTBEAT, again when telemetry stops while the
  HEARTBEAT goes on, after a HEARTBEAT gap, and after the autopilot rebooted (its boot time
  went back);
* with a signing key (``signing_key_file``) every outgoing message is MAVLink 2 signed, and
  with ``require_signed`` an incoming message without a valid, fresh signature is dropped
  before any of the above sees it (counted; reported to ``on_security``).

Which autopilot it is (``autopilot: auto`` = the HEARTBEAT's ``autopilot`` field) selects a
:class:`~tool_router.executor.autopilots.Profile`: mode names and switches, AMSL altitudes.

:class:`MavlinkDispatcher` is a :class:`~tool_router.executor.dispatch.Dispatcher` for
``mavlink:NAME`` bindings (names in :mod:`.mavlink_spec`):

* sensors answer from the telemetry cache (``reading: {json}``, so condition watches can
  sample them; :class:`MavlinkSampler` gives typed readings directly);
* actions: arguments from the request (refused when missing), limits, the heartbeat for
  motion commands, the profile's checks (armed, landed, home altitude, minimum take-off),
  then the mode switch the command needs (``DO_SET_MODE``, confirmed by the HEARTBEAT), the
  command itself (COMMAND_LONG / COMMAND_INT, its COMMAND_ACK awaited) and, for take-off and
  reposition, the wait until the vehicle is there. Every motion answer says the mode it was
  flown in and the altitude above home and AMSL.

No call waits longer than its budget; nothing is queued: each command waits on its own ACK, so
``emergency_stop`` (flight termination) is sent at once whatever else is in flight, and even
when the heartbeat is lost.
"""
from __future__ import annotations

import collections
import math
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from tool_router.common.conditions import distance_m, encode_reading
from tool_router.common.mavlink_signing import (SignatureChecker, frame_header, install,
                                                read_mavlink_key)
from tool_router.executor.arguments import ArgumentError, ToolArguments, extract
from tool_router.executor.autopilots import (MAV_DO_REPOSITION_FLAGS_CHANGE_MODE, Profile,
                                             ProfileError, detect, profile_named)
from tool_router.executor.dispatch import OFF_WORDS, Binding, BindingKind, DispatchResult
from tool_router.executor.mavlink_spec import (
    ACTION_ARGUMENTS,
    ACTIONS,
    MAV_CMD_DO_REPOSITION,
    MAV_CMD_DO_SET_MODE,
    MAV_CMD_REQUEST_MESSAGE,
    MAV_CMD_SET_MESSAGE_INTERVAL,
    MAV_CMD_VIDEO_STOP_CAPTURE,
    MAV_RESULT_IN_PROGRESS,
    MAV_RESULTS,
    SENSORS,
    MavlinkConfig,
)
from tool_router.executor.sampling import Reading, SensorReadError

os.environ.setdefault('MAVLINK20', '1')
from pymavlink import mavutil  # noqa: E402  (MAVLINK20 must be set before the import)

M = mavutil.mavlink
MAV_STATE_NAMES = {0: 'uninit', 1: 'boot', 2: 'calibrating', 3: 'standby', 4: 'active',
                   5: 'critical', 6: 'emergency', 7: 'poweroff', 8: 'terminating'}
NOT_AUTOPILOT_TYPES = {M.MAV_TYPE_GCS, M.MAV_TYPE_CAMERA, M.MAV_TYPE_GIMBAL,
                       M.MAV_TYPE_ONBOARD_CONTROLLER, M.MAV_TYPE_ADSB, M.MAV_TYPE_ANTENNA_TRACKER}
# message id -> rate (Hz) asked with SET_MESSAGE_INTERVAL
STREAMS: dict[int, float] = {
    M.MAVLINK_MSG_ID_SYS_STATUS: 2.0, M.MAVLINK_MSG_ID_SYSTEM_TIME: 1.0,
    M.MAVLINK_MSG_ID_GPS_RAW_INT: 2.0, M.MAVLINK_MSG_ID_ATTITUDE: 4.0,
    M.MAVLINK_MSG_ID_GLOBAL_POSITION_INT: 4.0, M.MAVLINK_MSG_ID_VFR_HUD: 4.0,
    M.MAVLINK_MSG_ID_BATTERY_STATUS: 1.0, M.MAVLINK_MSG_ID_EXTENDED_SYS_STATE: 2.0,
    M.MAVLINK_MSG_ID_HOME_POSITION: 0.5, M.MAVLINK_MSG_ID_MISSION_CURRENT: 1.0,
}
BOOT_TIME_MESSAGES = ('SYSTEM_TIME', 'ATTITUDE', 'GLOBAL_POSITION_INT')
TELEMETRY_NEEDED = ('GLOBAL_POSITION_INT', 'SYS_STATUS')
LANDED = {M.MAV_LANDED_STATE_ON_GROUND}


class SensorUnavailable(SensorReadError):
    """No fresh telemetry for a reading (a SensorReadError, so watches record why)."""


@dataclass
class Flight:
    """What the autopilot's own telemetry says right now (None = not reported)."""

    armed: bool
    mode: str
    landed: bool
    relative_m: float | None
    amsl_m: float | None
    lat: float | None
    lon: float | None
    home_amsl_m: float | None
    home_source: str = ''

    def where(self) -> str:
        """'at 20.0 m above home (508.0 m AMSL)' (or 'at an unknown altitude')."""
        if self.relative_m is None:
            return 'at an unknown altitude'
        amsl = '' if self.amsl_m is None else f' ({self.amsl_m:.1f} m AMSL)'
        return f'at {self.relative_m:.1f} m above home{amsl}'


@dataclass
class _Waiter:
    component: int
    answers: queue.Queue[Any] = field(default_factory=queue.Queue)


class MavlinkLink:
    """One connection to one vehicle; thread-safe.

    ``on_event(text)`` hears what a log should say (autopilot found, rebooted, streams
    requested); ``on_security(event)`` hears refused messages: a dict with ``reason``
    (unsigned, bad_signature, replayed, stale), ``system``, ``component``, ``msgid`` and
    ``count`` (refusals from that sender since the last report), at most once per
    ``security_report_s`` per sender and reason.
    """

    def __init__(self, config: MavlinkConfig, *,
                 on_event: Callable[[str], None] | None = None,
                 on_security: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.config = config
        self.on_event = on_event
        self.on_security = on_security
        kwargs: dict[str, Any] = {'source_system': config.source_system,
                                  'source_component': config.source_component}
        if config.connection.startswith('/dev/'):
            kwargs['baud'] = config.baud
        self.checker: SignatureChecker | None = None
        key = read_mavlink_key(config.signing_key_file) if config.signing_key_file else None
        self.conn = mavutil.mavlink_connection(config.connection, **kwargs)
        _thread_safe_udp_server(self.conn)
        if key is not None:
            self.checker = install(self.conn.mav, key, sign_outgoing=True,
                                   link_id=config.signing_link_id,
                                   accept_unsigned=self._accept_unsigned)
        self._send_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._latest: dict[str, tuple[Any, float]] = {}
        self._home: tuple[Any, float] | None = None
        self._heartbeat: Any = None
        self._heartbeat_at: float | None = None
        self._components: dict[int, tuple[int, float]] = {}  # other components: type, seen
        self._seq: dict[tuple[int, int], int] = {}
        self._received: dict[tuple[int, int], int] = collections.Counter()
        self._lost: dict[tuple[int, int], int] = collections.Counter()
        self._boot_ms: dict[str, int] = {}
        self._params: dict[str, float] = {}
        self._texts: collections.deque[tuple[float, str]] = collections.deque(maxlen=20)
        self._waiters: dict[int, list[_Waiter]] = {}
        self.counters: collections.Counter[str] = collections.Counter()
        self._reported: dict[tuple[str, int, int], tuple[float, int]] = {}
        self._detected: str | None = None
        self._streams_wanted = False
        self._streams_at = -math.inf
        self._retry_s = config.stream_retry_s
        self.heartbeat_seen = threading.Event()  # set at the autopilot's first HEARTBEAT
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='mavlink-rx', daemon=True)
        self._maintainer = threading.Thread(target=self._maintain, name='mavlink-streams',
                                            daemon=True)
        self._thread.start()
        self._maintainer.start()

    # -- lifecycle -----------------------------------------------------------
    def close(self) -> None:
        """Stop the threads and close the connection."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        self._maintainer.join(timeout=3.0)
        try:
            self.conn.close()
        except OSError:
            pass

    def _event(self, text: str) -> None:
        if self.on_event is not None:
            try:
                self.on_event(text)
            except Exception:  # noqa: BLE001 - a logging callback must not stop the link
                pass

    def _run(self) -> None:
        next_beat = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_beat:
                next_beat = now + 1.0
                self._send(lambda mav: mav.heartbeat_send(
                    M.MAV_TYPE_GCS, M.MAV_AUTOPILOT_INVALID, 0, 0, M.MAV_STATE_ACTIVE))
            try:
                msg = self.conn.recv_match(blocking=True, timeout=0.1)
            except (OSError, ValueError):
                time.sleep(0.05)
                continue
            if msg is not None:
                try:
                    self._take(msg)
                except Exception as exc:  # noqa: BLE001 - one odd message must not stop the link
                    self.counters['malformed'] += 1
                    self._event(f'MAVLink: dropped a {msg.get_type()} message ({exc!r})')

    # -- receiving -------------------------------------------------------------
    def _accept_unsigned(self, mav: Any, msgid: int) -> bool:
        return not self.config.require_signed

    def _refused(self, msg: Any) -> None:
        """A frame pymavlink could not accept: bad CRC, bad prefix, or (here) its signature."""
        if 'signature' not in str(getattr(msg, 'reason', '')):
            self.counters['bad_data'] += 1
            return
        header = frame_header(bytes(msg.data))
        reason = 'unsigned'
        if header is not None and header.signed and self.checker is not None:
            reason = self.checker.last_reason or 'bad_signature'
        system = header.system if header else 0
        component = header.component if header else 0
        msgid = header.msgid if header else -1
        self.counters[f'refused_{reason}'] += 1
        if self.on_security is None:
            return
        now = time.monotonic()
        key = (reason, system, component)
        with self._state_lock:
            last, pending = self._reported.get(key, (-math.inf, 0))
            pending += 1
            if now - last < self.config.security_report_s:
                self._reported[key] = (last, pending)
                return
            self._reported[key] = (now, 0)
        try:
            self.on_security({'reason': reason, 'system': system, 'component': component,
                              'msgid': msgid, 'message': _message_name(msgid), 'count': pending})
        except Exception:  # noqa: BLE001 - tracing must not stop the link
            pass

    def _take(self, msg: Any) -> None:
        kind = msg.get_type()
        if kind == 'BAD_DATA':
            self._refused(msg)
            return
        system, component = msg.get_srcSystem(), msg.get_srcComponent()
        if system != self.config.target_system:
            if kind == 'COMMAND_ACK':
                self.counters['acks_ignored'] += 1
            else:
                self.counters['other_systems'] += 1
            return
        if self.checker is not None and not msg.get_signed():
            self.counters['unsigned_accepted'] += 1
        now = time.monotonic()
        autopilot = component == self.config.target_component
        request_streams = ''
        with self._state_lock:
            self._count_sequence((system, component), msg.get_seq())
            if kind == 'HEARTBEAT':
                if autopilot and msg.autopilot != M.MAV_AUTOPILOT_INVALID and \
                        msg.type not in NOT_AUTOPILOT_TYPES:
                    gap = None if self._heartbeat_at is None else now - self._heartbeat_at
                    if gap is None:
                        request_streams = 'first HEARTBEAT'
                    elif gap > self.config.heartbeat_timeout_s:
                        request_streams = f'HEARTBEAT back after {gap:.1f} s'
                    self._heartbeat, self._heartbeat_at = msg, now
                    detected = detect(msg.autopilot, msg.type)
                    newly = detected != self._detected
                    self._detected = detected
                else:
                    self._components[component] = (msg.type, now)
                    newly = False
            elif kind == 'COMMAND_ACK':
                waiter = self._ack_waiter(msg, component)
                if waiter is None:
                    self.counters['acks_ignored'] += 1
                else:
                    waiter.answers.put(msg)
                return
            elif autopilot:
                rebooted = self._boot_went_back(kind, msg)
                if rebooted:
                    request_streams = rebooted
                    self._forget_autopilot(system, component)
                if kind == 'HOME_POSITION':
                    self._home = (msg, now)
                elif kind == 'STATUSTEXT':
                    self._texts.append((now, _text(msg)))
                elif kind == 'PARAM_VALUE':
                    self._params[_text(msg, 'param_id')] = float(msg.param_value)
                self._latest[kind] = (msg, now)
            if request_streams:
                self._streams_wanted = True
        if kind == 'HEARTBEAT' and autopilot and self._heartbeat is msg:
            if not self.heartbeat_seen.is_set():
                self.heartbeat_seen.set()
            if newly:
                self._event(f'MAVLink: autopilot {self.describe()}')
        if request_streams and request_streams != 'first HEARTBEAT':
            self._event(f'MAVLink: {request_streams}: telemetry streams will be requested again')

    def _count_sequence(self, source: tuple[int, int], seq: int) -> None:
        last = self._seq.get(source)
        if last is not None:
            self._lost[source] += (seq - last - 1) % 256
        self._seq[source] = seq
        self._received[source] += 1

    def _boot_went_back(self, kind: str, msg: Any) -> str:
        if kind not in BOOT_TIME_MESSAGES:
            return ''
        boot_ms = int(msg.time_boot_ms)
        last = self._boot_ms.get(kind)
        self._boot_ms[kind] = boot_ms
        if last is not None and boot_ms + 1000 < last:
            self.counters['reboots'] += 1
            self._boot_ms = {kind: boot_ms}  # the other messages' boot times are the old boot's
            return f'autopilot rebooted ({kind} time_boot_ms {last} -> {boot_ms})'
        return ''

    def _forget_autopilot(self, system: int, component: int) -> None:
        """After a reboot: the cache, home and sequence belong to the previous boot."""
        self._latest.clear()
        self._home = None
        self._seq.pop((system, component), None)

    def _ack_waiter(self, ack: Any, component: int) -> _Waiter | None:
        """The command waiting for this ACK, if it is addressed to us by the right sender."""
        to_us = (getattr(ack, 'target_system', 0) == self.config.source_system
                 and getattr(ack, 'target_component', 0) == self.config.source_component)
        if not to_us:
            self.counters['acks_not_for_us'] += 1
            return None
        for waiter in self._waiters.get(int(ack.command), []):
            if waiter.component == component:
                return waiter
        return None

    def _send(self, build: Any) -> None:
        with self._send_lock:
            try:
                build(self.conn.mav)
            except OSError:
                pass  # no peer yet (udpin before the first packet); the ACK wait times out

    # -- streams -----------------------------------------------------------------
    def _maintain(self) -> None:
        while not self._stop.wait(0.2):
            if self.link_lost():
                continue
            now = time.monotonic()
            with self._state_lock:
                wanted = self._streams_wanted
                missing = [k for k in TELEMETRY_NEEDED if self._age(k, now) is None]
            if not missing:
                self._retry_s = self.config.stream_retry_s
            if wanted:
                self._retry_s = self.config.stream_retry_s
                due = True
            else:
                due = bool(missing) and now - self._streams_at >= self._retry_s
            if due and now - self._streams_at >= self.config.stream_retry_s:
                self._streams_at = now
                with self._state_lock:
                    self._streams_wanted = False
                if not wanted:  # telemetry still missing: ask less often each time (up to 30 s)
                    self._retry_s = min(30.0, self._retry_s * 2)
                why = 'requested' if wanted else f'requested again (no {", ".join(missing)})'
                self._request_streams(why)

    def _age(self, kind: str, now: float) -> float | None:
        entry = self._latest.get(kind)
        if entry is None or now - entry[1] > self.config.stale_after_s:
            return None
        return now - entry[1]

    def _request_streams(self, why: str) -> None:
        """SET_MESSAGE_INTERVAL for each stream; REQUEST_DATA_STREAM where that is refused."""
        c = self.config
        budget = min(1.0, c.ack_timeout_s)
        refused = 0
        for msg_id, hz in STREAMS.items():
            if self._stop.is_set():
                return
            result, _ = self.command(MAV_CMD_SET_MESSAGE_INTERVAL, [float(msg_id), 1e6 / hz],
                                     budget)
            if result != M.MAV_RESULT_ACCEPTED:
                refused += 1
        self.command(MAV_CMD_REQUEST_MESSAGE, [float(M.MAVLINK_MSG_ID_HOME_POSITION)], budget)
        profile = self.profile()
        fallback = refused and (profile is None or profile.name == 'ardupilot')
        if fallback:  # ArduPilot before SET_MESSAGE_INTERVAL streams only what this asks for
            self._send(lambda mav: mav.request_data_stream_send(
                c.target_system, c.target_component, M.MAV_DATA_STREAM_ALL, 4, 1))
        if profile is not None and profile.name == 'px4':
            self._send(lambda mav: mav.param_request_read_send(
                c.target_system, c.target_component, b'MIS_TAKEOFF_ALT', -1))
        self.counters['stream_requests'] += 1
        self._event(f'MAVLink: telemetry streams {why}: SET_MESSAGE_INTERVAL x{len(STREAMS)}'
                    + (f' ({refused} refused; REQUEST_DATA_STREAM sent)' if fallback else ''))

    # -- state -----------------------------------------------------------------
    def heartbeat_age(self) -> float | None:
        """Seconds since the autopilot's last HEARTBEAT; None when none ever came."""
        with self._state_lock:
            return None if self._heartbeat_at is None else time.monotonic() - self._heartbeat_at

    def link_lost(self) -> bool:
        """No autopilot HEARTBEAT within ``heartbeat_timeout_s``."""
        age = self.heartbeat_age()
        return age is None or age > self.config.heartbeat_timeout_s

    def wait_heartbeat(self, timeout_s: float) -> bool:
        """Wait until the autopilot's heartbeat is seen (True) or ``timeout_s`` passes."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.link_lost():
                return True
            time.sleep(0.02)
        return False

    def latest(self, kind: str) -> Any:
        """The autopilot's freshest message of a type, or None when missing or stale."""
        with self._state_lock:
            entry = self._latest.get(kind)
        if entry is None or time.monotonic() - entry[1] > self.config.stale_after_s:
            return None
        return entry[0]

    def profile(self) -> Profile | None:
        """The rules commands follow: the configured stack, or the detected one for 'auto'."""
        name = self._detected if self.config.autopilot == 'auto' else self.config.autopilot
        if name is None:
            return None
        with self._state_lock:
            min_takeoff = self._params.get('MIS_TAKEOFF_ALT', self.config.px4_min_takeoff_m)
        return profile_named(name, min_takeoff)

    def profile_problem(self) -> str:
        """Why motion commands cannot follow any profile ('' = they can)."""
        with self._state_lock:
            beat = self._heartbeat
        if beat is None:
            return ''
        detected = self._detected
        if detected is None:
            return (f'the autopilot is not one this executor knows (HEARTBEAT autopilot '
                    f'{beat.autopilot}, type {beat.type}; ArduCopter and PX4 are)')
        if self.config.autopilot not in ('auto', detected):
            return (f'configured for {self.config.autopilot} but the HEARTBEAT says '
                    f'{detected}: mode numbers and altitudes would be read wrongly')
        return ''

    def describe(self) -> str:
        """'ArduCopter, system 1 component 1, mode STABILIZE' (what the HEARTBEAT says)."""
        profile = self.profile()
        label = profile.label if profile is not None else 'unknown autopilot'
        c = self.config
        return f'{label}, system {c.target_system} component {c.target_component}, ' \
               f'mode {self.mode()}'

    def mode(self) -> str:
        """The autopilot's mode by name, from its last HEARTBEAT ('' before one came)."""
        with self._state_lock:
            beat = self._heartbeat
        if beat is None:
            return ''
        profile = self.profile()
        if profile is None:
            return f'MODE_{beat.custom_mode}'
        return profile.mode_name(int(beat.custom_mode))

    def armed(self) -> bool:
        """Whether the last autopilot HEARTBEAT says armed."""
        with self._state_lock:
            beat = self._heartbeat
        return beat is not None and bool(beat.base_mode & M.MAV_MODE_FLAG_SAFETY_ARMED)

    def home_amsl(self) -> tuple[float | None, str]:
        """Home's altitude AMSL and its source (HOME_POSITION, else position minus relative)."""
        now = time.monotonic()
        with self._state_lock:
            home = self._home
        if home is not None and now - home[1] <= max(10.0, 3 * self.config.stale_after_s):
            return home[0].altitude / 1000.0, 'HOME_POSITION'
        pos = self.latest('GLOBAL_POSITION_INT')
        if pos is not None:
            return (pos.alt - pos.relative_alt) / 1000.0, 'GLOBAL_POSITION_INT'
        return None, ''

    def flight(self) -> Flight:
        """Armed, mode, landed, position and home as the autopilot reports them."""
        armed = self.armed()
        pos = self.latest('GLOBAL_POSITION_INT')
        relative = pos.relative_alt / 1000.0 if pos is not None else None
        home, source = self.home_amsl()
        ext = self.latest('EXTENDED_SYS_STATE')
        if ext is not None and ext.landed_state:
            landed = ext.landed_state in LANDED
        else:
            landed = not armed or (relative is not None and relative < 0.3)
        return Flight(armed=armed, mode=self.mode(), landed=landed, relative_m=relative,
                      amsl_m=pos.alt / 1000.0 if pos is not None else None,
                      lat=pos.lat / 1e7 if pos is not None else None,
                      lon=pos.lon / 1e7 if pos is not None else None,
                      home_amsl_m=home, home_source=source)

    def last_heartbeat(self) -> Any:
        """The autopilot's last HEARTBEAT (None before one came; see :meth:`link_lost`)."""
        with self._state_lock:
            return self._heartbeat

    def home_position(self) -> Any:
        """The autopilot's last HOME_POSITION (None before one came)."""
        with self._state_lock:
            return None if self._home is None else self._home[0]

    def loss_by_component(self) -> dict[tuple[int, int], tuple[int, int]]:
        """(system, component) -> (messages received, messages lost by sequence gaps)."""
        with self._state_lock:
            return {source: (count, self._lost[source])
                    for source, count in self._received.items()}

    def texts_since(self, since: float) -> list[str]:
        """The autopilot's STATUSTEXTs received after ``since`` (monotonic seconds)."""
        with self._state_lock:
            return [text for at, text in self._texts if at >= since]

    # -- commands -------------------------------------------------------------
    def command(self, command: int, params: list[float], timeout_s: float, *,
                component: int | None = None, frame: int | None = None,
                x: int = 0, y: int = 0) -> tuple[int | None, str]:
        """Send a command, wait for its COMMAND_ACK: (MAV_RESULT or None on timeout, text)."""
        p = (params + [0.0] * 7)[:7]
        target_comp = self.config.target_component if component is None else component
        waiter = _Waiter(target_comp)
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
                    ack = waiter.answers.get(timeout=left)
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
            raise SensorUnavailable(f'no telemetry: no fresh {kind} from the autopilot '
                                    f'(system {self.config.target_system}, component '
                                    f'{self.config.target_component})')
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
        gps = self.latest('GPS_RAW_INT')
        if gps is not None:  # "if gps is lost": a 3D fix (fix_type 3 and up) or none
            values['gps_fix'] = int(gps.fix_type) >= 3
            values['satellites'] = int(gps.satellites_visible)  # "if sats < 8"
        with self._state_lock:
            home = self._home
        if home is not None:
            values['home_distance_m'] = round(distance_m(lat, lon, home[0].latitude / 1e7,
                                                         home[0].longitude / 1e7), 2)
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
        c = self.config
        source = (c.target_system, c.target_component)
        now = time.monotonic()
        with self._state_lock:
            received, lost = self._received[source], self._lost[source]
            others = sorted(comp for comp, (_, seen) in self._components.items()
                            if now - seen <= c.heartbeat_timeout_s)
            counters = dict(self.counters)
        total = received + lost
        profile = self.profile()
        refused = sum(v for k, v in counters.items() if k.startswith('refused_'))
        values: dict[str, Any] = {
            'link_lost': self.link_lost(),
            'heartbeat_age_s': None if age is None else round(age, 3),
            'packet_loss_pct': round(100.0 * lost / total, 2) if total else 0.0,
            'autopilot': profile.label if profile is not None else None,
            'components': ','.join(str(comp) for comp in others),
            'acks_ignored': counters.get('acks_ignored', 0),
            'refused': refused,
            'stream_requests': counters.get('stream_requests', 0),
            'reboots': counters.get('reboots', 0),
            'signed': self.checker is not None,
        }
        radio = self.latest('RADIO_STATUS')
        if radio is not None:
            values['rssi_dbm'] = round(radio.rssi / 1.9 - 127.0, 1)  # SiK radio scale
        return values

    def _read_state(self) -> dict[str, Any]:
        if self.link_lost():
            raise SensorUnavailable('no telemetry: the autopilot HEARTBEAT is lost')
        with self._state_lock:
            beat = self._heartbeat
        flight = self.flight()
        phase = 'disarmed' if not flight.armed else ('landed' if flight.landed else 'airborne')
        values: dict[str, Any] = {'armed': flight.armed, 'mode': flight.mode,
                                  'on_ground': flight.landed, 'phase': phase,
                                  'system_status': MAV_STATE_NAMES.get(beat.system_status, '?'),
                                  'altitude_m': flight.relative_m,
                                  'amsl_m': flight.amsl_m}
        try:
            values['battery_pct'] = self._read_battery()['battery_pct']
        except SensorUnavailable:
            pass
        current = self.latest('MISSION_CURRENT')
        if current is not None and getattr(current, 'mission_state', None):
            values['mission'] = {2: 'none', 3: 'running', 4: 'paused',
                                 5: 'finished'}.get(current.mission_state, 'none')
            values['waypoint'] = _waypoint_reached(current, self.profile())
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


def _waypoint_reached(current: Any, profile: Profile | None) -> int:
    """The last mission item reached, numbered as a ground station shows them (first = 1).

    MISSION_CURRENT.seq is the item flown to: ArduPilot's first waypoint is seq 1 (home is 0),
    PX4's is seq 0; a finished mission has reached its last item (``total`` excludes home).
    """
    if current.mission_state == 5:
        return int(current.total)
    if current.mission_state not in (3, 4):
        return 0
    first = profile.first_item_seq if profile is not None else 0
    return max(0, int(current.seq) - first)


# catalog sensor tool -> mavlink sensor name (for MavlinkLink.read with a tool name)
TOOL_SENSORS = {'battery_status': 'battery', 'gps_position': 'position',
                'altitude_sensor': 'altitude', 'attitude_imu': 'attitude',
                'compass_heading': 'heading', 'velocity_estimate': 'velocity',
                'link_quality': 'link', 'vehicle_state': 'state', 'system_health': 'health',
                'geofence_monitor': 'geofence'}


@dataclass
class Arrival:
    """Where a command should take the vehicle, and in which modes it may travel there."""

    relative_m: float | None
    lat: float | None = None
    lon: float | None = None
    modes: frozenset[str] = frozenset()


@dataclass
class Plan:
    """What one action becomes on one autopilot."""

    command: int | None  # None: the mode switch is the whole action
    params: list[float]
    summary: str
    component: int | None = None
    frame: int | None = None
    x: int = 0
    y: int = 0
    mode: str = ''  # switch to this mode first ('' = stay)
    expect_mode: str = ''  # the mode the HEARTBEAT should show once accepted
    expect_armed: bool | None = None  # what the HEARTBEAT should say once accepted
    arrival: Arrival | None = None


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
        deadline = time.monotonic() + timeout_s
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
            return DispatchResult(False, f'refused, nothing sent: autopilot heartbeat lost '
                                         f'({seen}); motion commands are blocked',
                                  'heartbeat_lost')
        profile = self.link.profile()
        if action.motion:
            problem = self.link.profile_problem()
            if problem or profile is None:
                return DispatchResult(False, f'refused, nothing sent: {problem or "no autopilot"}',
                                      'autopilot_mismatch' if problem else 'heartbeat_lost')
        flight = self.link.flight()
        try:
            plan = self._plan(name, args, request_text, profile, flight)
        except LimitError as exc:
            return DispatchResult(False, f'refused, nothing sent: {exc}', 'outside_limits')
        except ProfileError as exc:
            return DispatchResult(False, f'refused, nothing sent: {exc.reason}', exc.failure_mode)
        return self._execute(plan, action.motion, profile, flight, deadline)

    # -- execution ---------------------------------------------------------------
    def _execute(self, plan: Plan, motion: bool, profile: Profile | None, flight: Flight,
                 deadline: float) -> DispatchResult:
        link = self.link
        sent_at = time.monotonic()
        mode_used = flight.mode
        mode_note = ''
        if plan.mode and profile is not None and plan.mode != flight.mode:
            failure = self._switch_mode(profile, plan.mode, deadline)
            if failure is not None:
                return DispatchResult(False, f'{_command_name(plan.command or 0)}'
                                      f'{plan.summary}: {failure}', 'mode_change_failed')
            mode_used = plan.mode
            asked = 'the request asked for it' if plan.command is None else \
                'not asked for by the request'
            mode_note = f' (switched from {flight.mode} first; {asked})'
        if plan.command is None:
            if not mode_note:  # nothing to send: the vehicle is in that mode already
                rest = plan.summary.replace(f' {mode_used}', '', 1)
                return DispatchResult(True, f'already in {mode_used}{rest}, {flight.where()}: '
                                            'nothing sent')
            label = f'MAV_CMD_DO_SET_MODE{plan.summary}'
            return DispatchResult(True, f'{label}, mode {mode_used}{mode_note}, '
                                        f'{flight.where()[3:]}: accepted')
        budget = min(self.config.ack_timeout_s, max(0.0, deadline - time.monotonic()))
        result, note = link.command(plan.command, plan.params, budget,
                                    component=plan.component, frame=plan.frame,
                                    x=plan.x, y=plan.y)
        label = f'{_command_name(plan.command)}{plan.summary}'
        if motion:
            label += f', mode {mode_used}{mode_note}'
            if plan.arrival is None or plan.arrival.relative_m is None:
                label += f', {flight.where()}'
        if result is None:
            return DispatchResult(False, f'{label}: {note}', 'ack_timeout')
        word, failure = MAV_RESULTS.get(result, (f'result {result}', 'mav_failed'))
        if failure:
            texts = link.texts_since(sent_at)
            said = f' ("{texts[-1]}")' if texts else ''
            return DispatchResult(False, f'{label}: {word} by the vehicle{said}', failure)
        tail = f', {note}' if note else ''
        if plan.expect_armed is not None and not self._wait_armed(plan.expect_armed, deadline):
            tail += ('; the HEARTBEAT does not say armed yet' if plan.expect_armed
                     else '; the HEARTBEAT still says armed')
        if plan.expect_mode:
            shown = self._wait_mode(plan.expect_mode, deadline)
            if shown != plan.expect_mode:
                tail += f'; the HEARTBEAT still shows {shown}'
            elif not plan.mode:
                label = label.replace(f', mode {mode_used}', f', mode {plan.expect_mode}', 1)
        if plan.arrival is not None and self.config.wait_arrival:
            arrived, how = self._wait_arrival(plan.arrival, deadline, sent_at)
            if arrived is None:
                return DispatchResult(False, f'{label}: {word}; {how}', 'interrupted')
            if not arrived:
                return DispatchResult(False, f'{label}: {word}; {how}', 'not_arrived')
            tail += f'; {how}'
        return DispatchResult(True, f'{label}: {word}{tail}')

    def _switch_mode(self, profile: Profile, mode: str, deadline: float) -> str | None:
        """DO_SET_MODE, then wait for the HEARTBEAT to show it; why not, or None when done."""
        budget = min(self.config.ack_timeout_s, max(0.0, deadline - time.monotonic()))
        result, note = self.link.command(MAV_CMD_DO_SET_MODE, profile.set_mode_params(mode),
                                         budget)
        if result is None:
            return f'mode switch to {mode}: {note}'
        if result != M.MAV_RESULT_ACCEPTED:
            word = MAV_RESULTS.get(result, (f'result {result}', ''))[0]
            return f'mode switch to {mode}: {word} by the vehicle (MAV_CMD_DO_SET_MODE)'
        shown = self._wait_mode(mode, deadline)
        if shown != mode:
            return (f'mode switch to {mode} acknowledged, but the HEARTBEAT still shows '
                    f'{shown} after {self.config.mode_timeout_s:g} s')
        return None

    def _wait_armed(self, armed: bool, deadline: float) -> bool:
        until = min(deadline, time.monotonic() + self.config.mode_timeout_s)
        while self.link.armed() != armed:
            if time.monotonic() >= until:
                return False
            time.sleep(0.02)
        return True

    def _wait_mode(self, mode: str, deadline: float) -> str:
        until = min(deadline, time.monotonic() + self.config.mode_timeout_s)
        while True:
            shown = self.link.mode()
            if shown == mode or time.monotonic() >= until:
                return shown
            time.sleep(0.02)

    def _wait_arrival(self, arrival: Arrival, deadline: float,
                      since: float) -> tuple[bool | None, str]:
        """(True, 'reached ...') / (False, 'not there after ...') / (None, 'interrupted ...')."""
        tol = self.config.arrival_tolerance_m
        while True:
            flight = self.link.flight()
            off = _offsets(arrival, flight)
            if off is not None and off[0] <= tol and off[1] <= tol:
                return True, (f'reached {flight.relative_m:.1f} m above home'
                              + (f' ({flight.amsl_m:.1f} m AMSL)' if flight.amsl_m else '')
                              + f' after {time.monotonic() - since:.1f} s')
            if arrival.modes and flight.mode not in arrival.modes and \
                    time.monotonic() - since > self.config.mode_timeout_s:
                return None, f'interrupted: the vehicle switched to {flight.mode} {flight.where()}'
            if self.link.link_lost():
                return None, 'interrupted: the autopilot heartbeat was lost on the way'
            if time.monotonic() >= deadline:
                where = flight.where() if off is None else \
                    f'{off[0]:.1f} m away horizontally, {off[1]:.1f} m vertically'
                return False, f'not there when the call budget ran out ({where})'
            time.sleep(0.05)

    # -- planning ---------------------------------------------------------------------
    def _plan(self, name: str, args: ToolArguments, text: str, profile: Profile | None,
              flight: Flight) -> Plan:
        c = self.config
        nan = math.nan
        action = ACTIONS[name]
        mode = profile.mode_for(name, flight.mode) if profile is not None else ''
        after = profile.mode_after.get(name, '') if profile is not None else ''
        if name == 'arm':
            if flight.armed and not flight.landed:  # flying: the vehicle answers 'accepted'
                mode = ''
            elif profile is not None and not mode and not profile.can_arm_in(flight.mode):
                mode = profile.hold_mode
            return Plan(action.command, [1.0], ' arm', mode=mode, expect_armed=True)
        if name == 'disarm':
            return Plan(action.command, [0.0], ' disarm', expect_armed=False)
        assert profile is not None or not action.motion
        if name == 'takeoff':
            assert profile is not None
            height = args.height_m if args.height_m is not None else c.default_takeoff_m
            _check_altitude(height, c, 'take-off height', low=0.5)
            profile.check_takeoff(height)
            target = profile.altitude(height, flight.home_amsl_m)
            if not flight.armed:
                raise ProfileError('the vehicle is disarmed: arm it first (arm_motors); a '
                                   f'take-off sent now would {_disarmed_takeoff(profile)}',
                                   'not_ready')
            if not flight.landed:
                raise ProfileError(f'the vehicle is already in the air ({flight.where()}); use '
                                   'set_altitude or goto_waypoint', 'not_ready')
            said = '' if args.height_m is not None else ' (default height)'
            return Plan(action.command, [0, 0, 0, nan, nan, nan, profile.takeoff_param7(target)],
                        f' to {target.describe()}{said}', mode=mode, expect_mode=after,
                        arrival=Arrival(height, modes=_travel(profile, 'takeoff', mode, after)))
        if name in ('goto', 'set_altitude'):
            assert profile is not None
            if name == 'goto':
                assert args.lat is not None and args.lon is not None
                lat, lon = args.lat, args.lon
                self._check_fence(lat, lon)
                altitude = args.altitude_m
                if altitude is None:
                    if flight.relative_m is None:
                        raise LimitError('no altitude given and no position telemetry to keep '
                                         'the current one')
                    altitude = max(flight.relative_m, c.min_altitude_m)
            else:
                assert args.altitude_m is not None
                _check_altitude(args.altitude_m, c, 'target altitude')
                profile.altitude(args.altitude_m, flight.home_amsl_m)
                self._need_airborne(flight, name)
                if flight.lat is None or flight.lon is None:
                    raise LimitError('no position telemetry: the new altitude is flown at the '
                                     'current position, which is unknown')
                lat, lon, altitude = flight.lat, flight.lon, args.altitude_m
            _check_altitude(altitude, c, 'target altitude')
            target = profile.altitude(altitude, flight.home_amsl_m)
            self._need_airborne(flight, name)
            frame, z = profile.reposition_frame_z(target)
            summary = (f' to {lat:.6f},{lon:.6f} at {target.describe()}' if name == 'goto'
                       else f' to {target.describe()} (here)')
            return Plan(MAV_CMD_DO_REPOSITION,
                        [-1.0, float(MAV_DO_REPOSITION_FLAGS_CHANGE_MODE), 0.0, nan, 0, 0, z],
                        summary, frame=frame, x=int(round(lat * 1e7)), y=int(round(lon * 1e7)),
                        mode=mode, expect_mode=after,
                        arrival=Arrival(altitude, lat if name == 'goto' else None,
                                        lon if name == 'goto' else None,
                                        _travel(profile, name, mode, after)))
        if name == 'precision_land':
            return Plan(action.command, [0, 2.0, 0, nan, nan, nan, nan], ' (precision)',
                        mode=mode, expect_mode=after)
        if name == 'land':
            return Plan(action.command, [0, 0, 0, nan, nan, nan, nan], '', mode=mode,
                        expect_mode=after)
        if name in ('rtl', 'mission_start'):
            return Plan(action.command, [0.0] * 7, '', mode=mode, expect_mode=after)
        if name == 'hold':
            if profile is not None and not profile.flight_mode:  # PX4: Hold is a mode
                return Plan(None, [], f' {profile.hold_mode} (hold position)',
                            mode=profile.hold_mode)
            return Plan(action.command, [0.0], ' (pause: hold position)', mode=mode)
        if name == 'set_speed':
            assert args.speed_mps is not None
            if args.speed_mps > c.max_speed_mps:
                raise LimitError(f'speed {args.speed_mps:g} m/s is above max_speed_mps '
                                 f'{c.max_speed_mps:g}')
            return Plan(action.command, [1.0, args.speed_mps, -1.0],
                        f' to {args.speed_mps:g} m/s')
        if name == 'set_heading':
            assert args.heading_deg is not None
            return Plan(action.command, [args.heading_deg, 30.0, 0.0, 0.0],
                        f' to {args.heading_deg:g} deg', mode=mode)
        if name == 'terminate':
            return Plan(action.command, [1.0], '')
        if name == 'photo':
            return Plan(action.command, [0, 0, 1.0, 0], ' (one image)',
                        component=c.camera_component)
        if name == 'video':
            if OFF_WORDS.search(text):
                return Plan(MAV_CMD_VIDEO_STOP_CAPTURE, [0.0], ' (stop)',
                            component=c.camera_component)
            return Plan(action.command, [0.0, 0.0], ' (start)', component=c.camera_component)
        if name == 'gimbal':
            assert args.pitch_deg is not None
            return Plan(action.command, [args.pitch_deg, nan, nan, nan, 0.0],
                        f' pitch {args.pitch_deg:g} deg')
        if name == 'release':
            return Plan(action.command, [1.0, 0.0], ' (release)')
        raise LimitError(f'no command built for {name!r}')

    def _need_airborne(self, flight: Flight, name: str) -> None:
        if not flight.armed or flight.landed:
            state = 'disarmed' if not flight.armed else 'on the ground'
            raise ProfileError(f'the vehicle is {state} ({flight.where()}): take off first; '
                               f'{name} moves a flying vehicle', 'not_ready')

    def _check_fence(self, lat: float, lon: float) -> None:
        fence = self.config.geofence
        if fence.radius_m > 0:
            far = distance_m(lat, lon, fence.lat, fence.lon)
            if far > fence.radius_m:
                raise LimitError(f'{lat:.6f},{lon:.6f} is {far:.0f} m from the geofence centre '
                                 f'(radius {fence.radius_m:g} m)')


def _travel(profile: Profile, name: str, mode: str, after: str) -> frozenset[str]:
    """The modes a vehicle may show while a take-off / reposition is under way."""
    modes = {m for m in (mode or profile.flight_mode, after) if m}
    if profile.name == 'px4' and name == 'takeoff':
        modes.add('AUTO_LOITER')  # PX4 holds once the take-off altitude is reached
    return frozenset(modes)


def _offsets(arrival: Arrival, flight: Flight) -> tuple[float, float] | None:
    """(horizontal, vertical) metres still to go; None without position telemetry."""
    if flight.relative_m is None:
        return None
    vertical = 0.0 if arrival.relative_m is None else abs(flight.relative_m - arrival.relative_m)
    horizontal = 0.0
    if arrival.lat is not None and arrival.lon is not None:
        if flight.lat is None or flight.lon is None:
            return None
        horizontal = distance_m(flight.lat, flight.lon, arrival.lat, arrival.lon)
    return horizontal, vertical


def _disarmed_takeoff(profile: Profile) -> str:
    if profile.name == 'px4':
        return 'be accepted and the vehicle would climb the moment it is armed'
    return 'be answered FAILED by ArduCopter'


class LimitError(Exception):
    """A command outside the configured limits (or without what it needs); nothing is sent."""


def _check_altitude(value: float, c: MavlinkConfig, what: str, low: float | None = None) -> None:
    lowest = c.min_altitude_m if low is None else low
    if value > c.max_altitude_m:
        raise LimitError(f'{what} {value:g} m is above max_altitude_m {c.max_altitude_m:g}')
    if value < lowest:
        raise LimitError(f'{what} {value:g} m is below {lowest:g} m')


def _thread_safe_udp_server(conn: Any) -> None:
    """Send to a snapshot of a ``udpin`` connection's peers.

    pymavlink's ``mavudp.write`` iterates the set of peers that its ``recv`` adds to; with
    sending and receiving on two threads a new peer (anyone who sends us a datagram) can
    end a send with "Set changed size during iteration". Every peer still gets each message.
    """
    if not getattr(conn, 'udp_server', False) or not hasattr(conn, 'clients'):
        return

    def write(buf: Any) -> None:
        for address in list(conn.clients):
            try:
                conn.port.sendto(buf, address)
            except OSError:
                pass

    conn.write = write


def _command_name(command: int) -> str:
    entry = M.enums['MAV_CMD'].get(command)
    return entry.name if entry is not None else f'MAV_CMD {command}'


def _message_name(msgid: int) -> str:
    cls = M.mavlink_map.get(msgid)
    return cls.msgname if cls is not None else f'message {msgid}'


def _text(msg: Any, field_name: str = 'text') -> str:
    value = getattr(msg, field_name, '')
    if isinstance(value, (bytes, bytearray)):
        value = value.decode('utf-8', errors='replace')
    return str(value).rstrip('\x00')


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
