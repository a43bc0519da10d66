"""Someone else on the link forges the autopilot: with MAVLink 2 signing required, nothing changes.

Real UDP on 127.0.0.1. The vehicle (strict simulator) and the executor's link share a
32-byte key file (0600); the intruder is a separate socket claiming system 1 component 1,
sending unsigned frames or frames signed with a key of its own, or replaying a frame the
vehicle really sent. The same forgeries without signing show what signing protects.
"""
from __future__ import annotations

import os
import threading
import time
from types import SimpleNamespace

import pytest

pytest.importorskip('pymavlink')

from mavlink_rig import Intruder, free_udp_port, make_rig, wait_for  # noqa: E402
from tool_router.common.conditions import parse_condition  # noqa: E402
from tool_router.common.mavlink_signing import create_mavlink_key, read_mavlink_key  # noqa: E402
from tool_router.common.mavlink_signing import frame_header  # noqa: E402
from tool_router.executor.mavlink import MavlinkLink, MavlinkSampler  # noqa: E402
from tool_router.executor.mavlink_spec import MavlinkConfig  # noqa: E402
from tool_router.executor.watches import WatchManager  # noqa: E402
from tool_router.sim.autopilot import MavlinkSim  # noqa: E402

M = pytest.importorskip('pymavlink.mavutil').mavlink
pytestmark = pytest.mark.slow
ARM = M.MAV_CMD_COMPONENT_ARM_DISARM
OTHER_KEY = bytes(range(7, 39))


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / 'keys' / 'mavlink.key'
    create_mavlink_key(path)
    return path


@pytest.fixture(params=['ardupilot', 'px4'])
def signed(request, catalog, key_file):
    key = read_mavlink_key(key_file)
    rig = make_rig(catalog, request.param,
                   sim_kwargs={'signing_key': key, 'require_signed': True, 'drain_pct_per_s': 0},
                   signing_key_file=str(key_file), require_signed=True, security_report_s=0.5)
    yield rig
    rig.close()


@pytest.fixture
def unsigned(catalog):
    rig = make_rig(catalog, 'ardupilot', sim_kwargs={'drain_pct_per_s': 0})
    yield rig
    rig.close()


class Flood:
    """Send ``send()`` every ``period_s`` on a thread until the block ends."""

    def __init__(self, send, period_s=0.01):
        self.send, self.period_s = send, period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        while not self._stop.is_set():
            self.send()
            time.sleep(self.period_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def intruders(rig):
    """The same forger twice: unsigned, and signing with its own key."""
    return [Intruder(rig.port), Intruder(rig.port, key=OTHER_KEY)]


def test_signed_link_flies_and_reports_that_it_is_signed(signed):
    record, _ = signed.run(['arm_motors', 'takeoff'], 'arm and take off to 10 m')
    assert [t.outcome for t in record.tools] == ['dispatched'] * 2, record.tools
    reading = signed.link.read('link_quality')
    assert reading['signed'] is True and reading['refused'] == 0
    assert signed.link.counters['unsigned_accepted'] == 0
    assert signed.sim.snapshot()['refused'] == 0  # the vehicle took every command of ours


def test_forged_heartbeat_does_not_keep_a_silent_autopilot_alive(signed):
    forgers = intruders(signed)
    signed.sim.silence_autopilot(60.0)
    with Flood(lambda: [f.heartbeat(armed=True) for f in forgers], period_s=0.1):
        assert wait_for(signed.link.link_lost, timeout_s=30.0)
        _, t = signed.run(['return_to_home'], 'return home')
    assert t['return_to_home'].failure_mode == 'heartbeat_lost', t['return_to_home'].message
    counters = signed.link.counters
    assert counters['refused_unsigned'] > 0 and counters['refused_bad_signature'] > 0
    reasons = {(e['reason'], e['system'], e['component'], e['message']) for e in signed.security}
    assert ('unsigned', 1, 1, 'HEARTBEAT') in reasons
    assert ('bad_signature', 1, 1, 'HEARTBEAT') in reasons
    assert all(e['count'] >= 1 for e in signed.security)
    for f in forgers:
        f.close()


def test_forged_command_ack_does_not_hide_a_real_arm(signed):
    forgers = intruders(signed)
    with Flood(lambda: [f.ack(ARM, M.MAV_RESULT_DENIED) for f in forgers]):
        _, t = signed.run(['arm_motors'], 'arm')
    assert t['arm_motors'].outcome == 'dispatched', t['arm_motors'].message
    assert signed.sim.snapshot()['armed'] is True
    assert signed.link.counters['refused_unsigned'] > 0
    for f in forgers:
        f.close()


def test_forged_battery_status_does_not_fire_a_watch(signed):
    with signed.sim.lock:
        signed.sim.state.battery_pct = 56.0
    assert wait_for(lambda: signed.link.read('battery_status')['battery_pct'] == 56.0)
    forgers = intruders(signed)
    fired = []
    watches = WatchManager(MavlinkSampler(signed.link), fired.append, lambda r: None)
    watches.arm('r', 'land', parse_condition('when the battery drops below 25%',
                                             ['battery_status']), 'land below 25%')
    readings = set()
    with Flood(lambda: [f.battery(5) for f in forgers]):
        for _ in range(40):
            watches.tick()
            readings.add(signed.link.read('battery_status')['battery_pct'])
            time.sleep(0.05)
    assert not fired and readings == {56.0}
    for f in forgers:
        f.close()


def test_a_replayed_genuine_frame_is_refused(signed):
    sim = signed.sim
    captured = []
    original = sim.conn.write

    def tap(buf):  # what an eavesdropper on the link records
        header = frame_header(bytes(buf))
        if header is not None and header.msgid == 0 and header.component == 1:
            captured.append(bytes(buf))
        return original(buf)

    sim.conn.write = tap
    assert wait_for(lambda: len(captured) >= 2)
    sim.conn.write = original
    sim.silence_autopilot(60.0)
    assert wait_for(signed.link.link_lost, timeout_s=30.0)
    replay = Intruder(signed.port)
    with Flood(lambda: replay.send_raw(captured[-1]), period_s=0.1):
        time.sleep(1.0)
        assert signed.link.link_lost()
    assert signed.link.counters['refused_replayed'] > 0
    assert any(e['reason'] == 'replayed' for e in signed.security)
    replay.close()


def test_without_signing_the_same_forgeries_are_believed(unsigned):
    """What signing protects: an unsigned link cannot tell the forger from the autopilot."""
    forger = Intruder(unsigned.port)
    with Flood(lambda: forger.battery(5)):
        assert wait_for(lambda: unsigned.link.read('battery_status')['battery_pct'] == 5.0)
    unsigned.sim.silence_autopilot(60.0)
    with Flood(lambda: forger.heartbeat(), period_s=0.1):
        time.sleep(3.0)
        assert not unsigned.link.link_lost()  # a forged HEARTBEAT keeps the link "alive"
    forger.close()


def test_setup_signing_puts_the_key_on_the_vehicle(key_file):
    """``tool-router mavlink-key send`` (SETUP_SIGNING): the vehicle adopts the key and signs."""
    from tool_router.cli.mavlink import cmd_key_send

    port = free_udp_port()
    sim = MavlinkSim(f'udpin:127.0.0.1:{port}', autopilot='ardupilot').start()
    try:
        args = SimpleNamespace(file=str(key_file), connection=f'udpout:127.0.0.1:{port}',
                               system=1, component=1)
        assert cmd_key_send(args) == 0
        assert wait_for(lambda: sim.signing_key == read_mavlink_key(key_file))
        config = MavlinkConfig(connection=f'udpout:127.0.0.1:{port}',
                               signing_key_file=str(key_file), require_signed=True)
        link = MavlinkLink(config)
        try:
            assert link.wait_heartbeat(15.0)  # only signed frames get through: the vehicle signs
            assert link.counters['refused_unsigned'] == 0
        finally:
            link.close()
    finally:
        sim.stop()
    assert (os.stat(key_file).st_mode & 0o777) == 0o600
