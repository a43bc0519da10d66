"""Fail safe, not fail closed, on a full disk (issue 26 #7; docs/SECURITY.md "Full disk").

The pure part runs the real TraceSink, TraceWriter (hash-chained), pipeline, intake and watch
manager; only the disk is switched full (a TraceWriter whose write raises ENOSPC while
``full``). The process test fills the executor's disk for real: RLIMIT_FSIZE set on the running
executor (``prlimit``) makes every append to its trace file fail with EFBIG, as a full disk
does, and lifting it is the space coming back.
"""
from __future__ import annotations

import errno
import json
import resource
import threading
import uuid
from pathlib import Path

import pytest
from test_intake import Clock, Vehicle, signed

from tool_router.common import signing
from tool_router.common.conditions import parse_condition
from tool_router.executor import auth
from tool_router.executor.auth import SecurityRecord
from tool_router.executor.chain import verify_directory
from tool_router.executor.config import load_executor_config
from tool_router.executor.intake import Intake, IntakeRules
from tool_router.executor.permissions import SAFETY_ACTIONS, PermissionPolicy, load_permissions
from tool_router.executor.pipeline import ExecutionPipeline
from tool_router.executor.sampling import Reading
from tool_router.executor.sink import TraceSink
from tool_router.executor.traces import TraceEvent, TraceWriter, read_traces, trace_files
from tool_router.executor.watches import WatchManager

KEY = b'k' * 32


class Disk(TraceWriter):
    """The real writer on a disk that can be full."""

    full = False

    def write(self, record):
        if self.full:
            raise OSError(errno.ENOSPC, 'No space left on device')
        return super().write(record)


def on_disk(directory: Path) -> list:
    return [r for p in trace_files([directory]) for r in read_traces(p)]


def security(reason: str) -> SecurityRecord:
    return SecurityRecord(event='execute_refused', stamp=2.0, request_id='x', claimed_operator='',
                          key_id='', reason=reason)


def event(rid: str, name: str = 'received') -> TraceEvent:
    return TraceEvent(event=name, request_id=rid, stamp=1.0)


def test_records_wait_in_memory_in_order_and_reach_the_disk_with_the_chain_intact(tmp_path):
    disk = Disk(tmp_path, chain_key=KEY)
    logged: list[tuple[str, str]] = []
    sink = TraceSink(disk, log=lambda level, message: logged.append((level, message)))
    sink.event(event('a'))
    disk.full = True
    with pytest.raises(OSError):
        sink.event(event('b'))  # not kept: the caller must not act
    assert sink.event(event('c'), keep=True) is False  # kept: a safety action acts on it
    sink.security(security('unsigned'))
    health = sink.health()
    assert (health.on_disk, health.backlog) == (False, 2) and 'No space' in health.error
    assert health.status()[0] == 'ERROR'
    assert [r.request_id for r in on_disk(tmp_path)] == ['a']
    assert sink.flush().backlog == 2  # still full: nothing lost, nothing written
    disk.full = False
    assert sink.flush().on_disk
    lines = on_disk(tmp_path)
    assert [(r.event, r.request_id) for r in lines] == [
        ('received', 'a'), ('received', 'c'), ('execute_refused', 'x')]
    sink.close()
    report = verify_directory(tmp_path, KEY)
    assert report.ok, report
    assert any('written to disk' in m for _, m in logged)


def test_the_backlog_is_bounded_and_drops_security_records_first(tmp_path):
    disk = Disk(tmp_path)
    sink = TraceSink(disk, max_backlog=3)
    disk.full = True
    sink.security(security('unsigned'))
    sink.event(event('land1'), keep=True)
    sink.event(event('land2'), keep=True)
    sink.event(event('land3'), keep=True)  # evicts the security record, not a vehicle's story
    sink.security(security('unsigned'))  # dropped
    assert (sink.health().backlog, sink.health().dropped) == (3, 2)
    disk.full = False
    sink.flush()
    assert [r.request_id for r in on_disk(tmp_path)] == ['land1', 'land2', 'land3']


@pytest.fixture
def rig(tmp_path, catalog):
    operators = tmp_path / 'operators.yaml'
    auth.add_operator(operators, 'alice', 'pilot')
    router_key_file = tmp_path / 'router.key'
    signing.write_key(router_key_file)
    clock = Clock()
    risks = {t.name: t.risk.value for t in catalog.tools}
    verifier = auth.ConfirmationVerifier.from_file(operators, lambda t: risks.get(t, 'critical'),
                                                   clock=clock)
    config = load_executor_config()
    vehicle = Vehicle()
    disk = Disk(tmp_path / 'traces', chain_key=KEY)
    sink = TraceSink(disk)
    pipeline = ExecutionPipeline(
        catalog, PermissionPolicy(load_permissions(config.resolved_permissions(), catalog),
                                  catalog, clock=clock),
        config.parsed_bindings(), vehicle, vehicle, clock=clock, journal=sink.event)
    submitted: list[int] = []
    intake = Intake(pipeline, verifier, sink, lambda t, u: submitted.append(t),
                    lambda: signing.router_key(router_key_file), IntakeRules(), clock=clock)

    class Rig:
        pass

    r = Rig()
    r.__dict__.update(intake=intake, sink=sink, disk=disk, vehicle=vehicle, clock=clock,
                      submitted=submitted, operators=operators,
                      router_key=signing.router_key(router_key_file), dir=tmp_path / 'traces')
    return r


def test_on_a_full_disk_safety_actions_run_and_other_actions_are_refused(rig):
    assert SAFETY_ACTIONS == {'land', 'return_to_home', 'hold_position', 'emergency_stop'}
    rig.disk.full = True
    photo = rig.intake.accept(*signed(rig, 'p1', ['rgb_camera']))
    assert not photo.accepted and 'trace not writable' in photo.reason
    assert 'only safety actions' in photo.reason and rig.submitted == []
    land = rig.intake.accept(*signed(rig, 'l1', ['land'], text='land now'))
    assert land.accepted
    record = rig.intake.run(rig.submitted[-1])
    assert record.tools[0].outcome == 'dispatched' and rig.vehicle.calls == ['land']
    # a request with both: the safety action runs, the other is refused, both are traced
    both = rig.intake.accept(*signed(rig, 'b1', ['rgb_camera', 'return_to_home'],
                                     text='take a photo and come home'))
    assert both.accepted
    record = rig.intake.run(rig.submitted[-1])
    by_tool = {t.tool: t for t in record.tools}
    assert by_tool['rgb_camera'].outcome == 'failed'
    assert by_tool['rgb_camera'].failure_mode == 'trace_unwritable'
    assert by_tool['return_to_home'].outcome == 'dispatched'
    assert rig.vehicle.calls == ['land', 'return_to_home']
    assert on_disk(rig.dir) == []
    rig.disk.full = False
    assert rig.sink.flush().on_disk
    finals = {r.request_id: r for r in on_disk(rig.dir) if type(r).__name__ == 'TraceRecord'}
    assert set(finals) == {'l1', 'b1'}
    assert [t.outcome for t in finals['l1'].tools] == ['dispatched']


class Battery:
    def __init__(self, pct: float) -> None:
        self.pct = pct

    def read(self, sensor: str) -> Reading:
        return Reading(sensor=sensor, values={'battery_pct': self.pct}, stamp=0.0)


def test_a_fired_watch_whose_action_could_not_run_is_armed_again_and_retried():
    now = [1000.0]
    emitted: list = []
    answers = [False, True]
    fired: list[str] = []

    def fire(watch) -> bool:
        fired.append(watch.watch_id)
        return answers.pop(0)

    manager = WatchManager(Battery(20.0), fire, emitted.append, retry_s=1.0,
                           clock=lambda: now[0])
    predicate = parse_condition('battery below 25%', ['battery_status', 'land'])
    watch = manager.arm('r1', 'land', predicate, 'land when the battery is below 25%')
    manager.tick()
    assert len(fired) == 1
    again = manager.snapshot()[0]
    assert again.state == 'armed' and again.retries == 1 and 'armed again' in again.reason
    manager.tick()  # within retry_s: not evaluated again
    assert len(fired) == 1
    now[0] += 1.5
    manager.tick()
    assert fired == [watch.watch_id, watch.watch_id]
    assert manager.armed() == []
    assert [r.event for r in emitted] == ['armed', 'fired', 'armed', 'fired']


# -- the real executor on a disk that fills --------------------------------------------------

pytest_slow = pytest.mark.slow


def _limit(pid: int, size: int) -> None:
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))


@pytest_slow
def test_a_real_executor_on_a_full_disk_lands_refuses_a_photo_and_catches_up(tmp_path):
    from procs import wait_until
    from test_executor_durability import AckWatch, executor
    from test_executor_nodes import RosPeer, start

    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    ns = f'fd{uuid.uuid4().hex[:6]}'
    trace_dir = tmp_path / 'traces'
    sim = start('tool_router.ros.sim_vehicle', '-r', f'__ns:=/{ns}',
                ready='simulated vehicle ready')
    proc = executor(trace_dir, ns, 'trace_chain:=false')
    peer = RosPeer()
    statuses: list = []
    lock = threading.Lock()

    def on_diag(msg) -> None:
        with lock:
            statuses.extend(s for s in msg.status if ns in s.name)

    peer.node.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 50)
    try:
        acks = AckWatch(peer, f'/{ns}/executor/acks')
        topic = f'/{ns}/tool_router/selected'
        first = peer.select(topic, ['gps_position'], 'where are we')
        assert acks.wait(first)[0]
        files = sorted(trace_dir.glob('*.jsonl'))
        assert wait_until(lambda: any(first in p.read_text() for p in files), 30)
        size = max(p.stat().st_size for p in trace_dir.glob('*.jsonl'))
        _limit(proc.proc.pid, size)  # the disk is full from here on
        photo = peer.select(topic, ['rgb_camera'], 'take a photo')
        ok, reason = acks.wait(photo)
        assert not ok and 'trace not writable' in reason, reason
        land = peer.select(topic, ['land'], 'land now')
        assert acks.wait(land)[0]

        def errored() -> bool:
            with lock:
                return any(s.level == DiagnosticStatus.ERROR and 'not on disk' in s.message
                           for s in statuses)
        assert wait_until(errored, 30), statuses[-3:]
        assert not any(land in p.read_text() for p in trace_dir.glob('*.jsonl'))
        _limit(proc.proc.pid, resource.RLIM_INFINITY)  # space comes back

        def landed_on_disk() -> list:
            lines = [json.loads(line) for p in trace_dir.glob('*.jsonl')
                     for line in p.read_text().splitlines() if line.strip()]
            return [r for r in lines if r.get('request_id') == land and 'tools' in r
                    and r.get('stamps')]
        assert wait_until(lambda: landed_on_disk(), 30)
        tools = landed_on_disk()[0]['tools']
        # the executor called the vehicle (a simulator on the ground answers that it is there)
        assert tools[0]['failure_mode'] != 'trace_unwritable', tools
        assert 'already on the ground' in tools[0]['message'], tools
        with lock:
            statuses.clear()

        def healthy() -> bool:
            with lock:
                return any(s.level == DiagnosticStatus.OK and 'every record on disk' in s.message
                           for s in statuses)
        assert wait_until(healthy, 30)
    finally:
        peer.close()
        proc.stop()
        sim.stop()
