"""Helpers for the MAVLink tests: real UDP on 127.0.0.1 between the link and the simulator.

Each rig gets a free UDP port; the simulator sends to it (udpout) and the executor's link
listens on it (udpin), as with a real autopilot. :class:`Intruder` is someone else on that
network: a separate pymavlink socket that claims to be the autopilot (system 1, component 1)
or another ground station, with no key or the wrong one.
"""
from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import Any

os.environ.setdefault('MAVLINK20', '1')
from pymavlink import mavutil  # noqa: E402

from tool_router.common.mavlink_signing import install  # noqa: E402
from tool_router.common.paths import config_path  # noqa: E402
from tool_router.executor.config import load_executor_config  # noqa: E402
from tool_router.executor.mavlink import (KindRouter, MavlinkDispatcher,  # noqa: E402
                                          MavlinkLink, SensorUnavailable)
from tool_router.executor.permissions import PermissionPolicy, load_permissions  # noqa: E402
from tool_router.executor.pipeline import ExecutionPipeline, Selection  # noqa: E402
from tool_router.executor.traces import ConfirmationOutcome  # noqa: E402
from tool_router.sim.autopilot import MavlinkSim  # noqa: E402

M = mavutil.mavlink
STREAM_COMMANDS = {'MAV_CMD_SET_MESSAGE_INTERVAL', 'MAV_CMD_REQUEST_MESSAGE'}
FAST = {'climb_mps': 10.0, 'cruise_mps': 15.0, 'land_mps': 5.0}


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


def wait_for(predicate, timeout_s=15.0, step=0.05):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


class Approver:
    """The operator: approves every confirmation (arm, emergency stop are 'critical')."""

    def __init__(self):
        self.asked = []

    def confirm(self, requests):
        self.asked += [r.tool for r in requests]
        return {r.tool: ConfirmationOutcome(outcome='approved', operator_name='op')
                for r in requests}


class NoRos:
    def dispatch(self, tool, binding, request_id, request_text, timeout_s):
        raise AssertionError(f'{tool} ({binding.spec}) should not leave MAVLink here')


@dataclass
class Rig:
    pipe: ExecutionPipeline
    sim: MavlinkSim
    link: MavlinkLink
    approver: Approver
    port: int
    events: list[str]
    security: list[dict[str, Any]]

    def run(self, tools, text, rid='r'):
        record = self.pipe.process(Selection.of(rid, tools, request_text=text))
        return record, {t.tool: t for t in record.tools}

    def close(self):
        self.link.close()
        self.sim.stop()

    def flight_commands(self):
        """The commands the autopilot received, without the link's stream requests."""
        return [c for c in self.sim.snapshot()['commands'] if c not in STREAM_COMMANDS]

    def altitude(self):
        try:
            return self.link.read('altitude_sensor')['altitude_m']
        except SensorUnavailable:
            return None

    def state(self):
        try:
            return self.link.read('vehicle_state')
        except SensorUnavailable:
            return {}


def make_rig(catalog, stack='ardupilot', *, call_timeout_s=30.0, sim_kwargs=None,
             wait_streams=True, **mavlink):
    """A pipeline over a MAVLink link to a fresh simulator following ``stack``'s rules.

    Keyword arguments other than these set the link's configuration (``autopilot``, ...).
    """
    port = free_udp_port()
    config = load_executor_config(config_path('executor_mavlink.yaml'))
    m = config.mavlink
    m.connection = f'udpin:127.0.0.1:{port}'
    m.ack_timeout_s = 1.0
    m.heartbeat_timeout_s = 1.5
    for key, value in mavlink.items():
        setattr(m, key, value)
    kwargs = dict(FAST)
    kwargs.update(sim_kwargs or {})
    sim = MavlinkSim(f'udpout:127.0.0.1:{port}', autopilot=stack, **kwargs).start()
    events, security = [], []
    link = MavlinkLink(m, on_event=events.append, on_security=security.append)
    if not link.wait_heartbeat(15.0):
        link.close()
        sim.stop()
        raise AssertionError('no heartbeat from the simulator over UDP')
    if wait_streams:
        assert wait_for(lambda: link.latest('GLOBAL_POSITION_INT') is not None
                        and link.home_amsl()[1] == 'HOME_POSITION', timeout_s=15.0), events
    rules = load_permissions(config.resolved_permissions(), catalog)
    approver = Approver()
    pipe = ExecutionPipeline(catalog, PermissionPolicy(rules, catalog), config.parsed_bindings(),
                             approver, KindRouter(MavlinkDispatcher(link), NoRos()),
                             call_timeout_s=call_timeout_s)
    return Rig(pipe, sim, link, approver, port, events, security)


class Intruder:
    """Someone else on the vehicle's network, sending to the executor's port."""

    def __init__(self, port: int, *, system: int = 1, component: int = 1,
                 key: bytes | None = None) -> None:
        self.conn = mavutil.mavlink_connection(f'udpout:127.0.0.1:{port}',
                                               source_system=system, source_component=component)
        if key is not None:  # signs, with a key of its own
            install(self.conn.mav, key, sign_outgoing=True, link_id=7,
                    accept_unsigned=lambda mav, msgid: True)
        self.mav = self.conn.mav

    def heartbeat(self, armed: bool = False, custom_mode: int = 4) -> None:
        base = M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (M.MAV_MODE_FLAG_SAFETY_ARMED if armed else 0)
        self.mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_ARDUPILOTMEGA, base,
                                custom_mode, M.MAV_STATE_ACTIVE)

    def ack(self, command: int, result: int, target_system: int = 255,
            target_component: int = 190) -> None:
        self.mav.command_ack_send(command, result, 255, 0, target_system, target_component)

    def battery(self, pct: int) -> None:
        self.mav.battery_status_send(0, 0, 3, 2500, [14000] + [65535] * 9, 1500, -1, -1, pct)

    def send_raw(self, frame: bytes) -> None:
        self.conn.write(frame)

    def close(self) -> None:
        self.conn.close()
