"""The executor under crash, overload and shutdown, as real processes over DDS.

Write-ahead traces: every selection the executor acknowledged is on disk, whatever
state it was in when the executor was SIGKILLed; a bounded queue refuses or expires
selections with a record; shutdown traces queued selections as cancelled and ends a
confirmation wait as "interrupted by shutdown"; late joiners see what is pending.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from procs import ROOT, wait_until
from test_executor_nodes import UNSIGNED, RosPeer, read_records, start

from tool_router.executor.traces import fold, read_traces, summarize, trace_files

pytestmark = pytest.mark.slow  # starts ROS processes


class AckWatch:
    """The test's subscription to an executor's SelectionAck topic."""

    def __init__(self, peer: RosPeer, topic: str) -> None:
        from tool_router.msg import SelectionAck
        self.acks: dict[str, tuple[bool, str]] = {}
        self._lock = threading.Lock()
        sub = peer.node.create_subscription(SelectionAck, topic, self._on, 100)
        # acks are volatile: one published before the executor's writer matched this reader
        # is lost (seen on a busy machine), so wait for the match before anything is sent
        assert wait_until(lambda: sub.get_publisher_count() > 0, 30), f'nobody publishes {topic}'

    def _on(self, msg) -> None:
        with self._lock:
            self.acks[msg.request_id] = (bool(msg.accepted), msg.reason)

    def wait(self, rid: str, timeout_s: float = 30.0) -> tuple[bool, str]:
        assert wait_until(lambda: rid in self.acks, timeout_s), f'no ack for {rid}'
        return self.acks[rid]


def executor(trace_dir: Path, ns: str, *params: str):
    """An executor whose every name lives under ``ns`` (relative names + a namespace)."""
    args = ['-r', f'__ns:=/{ns}', '-p', f'trace_dir:={trace_dir}', *UNSIGNED]
    for p in params:
        args += ['-p', p]
    return start('tool_router.ros.executor_node', *args, ready='executor ready')


def lines_on_disk(trace_dir: Path) -> list:
    """Every line of every trace file, strictly parsed (raises on a bad line)."""
    return [rec for path in trace_files([trace_dir]) for rec in read_traces(path)]


def test_sigkill_in_every_state_loses_no_acknowledged_request(tmp_path):
    """One kill catches three requests in three states: waiting for an operator,
    dispatching to an endpoint that never answers, and queued behind them."""
    ns = f'k{uuid.uuid4().hex[:6]}'
    trace_dir = tmp_path / 'traces'
    proc = executor(trace_dir, ns, 'max_parallel_requests:=2', 'confirm_timeout_s:=60.0',
                    'call_timeout_s:=60.0',
                    'bindings.wind_estimate:=trigger:nobody/offers/wind_estimate')
    peer = RosPeer()
    try:
        acks = AckWatch(peer, f'/{ns}/executor/acks')
        topic = f'/{ns}/tool_router/selected'
        waiting = peer.select(topic, ['arm_motors', 'takeoff'], 'arm and take off')
        calling = peer.select(topic, ['wind_estimate'], 'wind?')
        queued = peer.select(topic, ['gps_position'], 'where am I')
        for rid in (waiting, calling, queued):
            assert acks.wait(rid)[0]

        def states() -> dict:
            views = fold(r for r in _complete_lines(trace_dir))
            return {rid: views[rid].last_state for rid in views}
        assert wait_until(lambda: states().get(waiting) == 'awaiting_confirmation arm_motors'
                          and states().get(calling) == 'dispatching wind_estimate', 30), states()
        assert proc.stop(signal.SIGKILL) == -signal.SIGKILL
    finally:
        peer.close()
        proc.stop()
    records = lines_on_disk(trace_dir)  # every line parses
    views = fold(records)
    assert views[waiting].last_state == 'awaiting_confirmation arm_motors'
    assert views[calling].last_state == 'dispatching wind_estimate'
    assert views[queued].last_state == 'received'
    assert not any(v.finished for v in views.values())
    summary = summarize(records)
    assert {u['request_id'] for u in summary['unfinished']} == {waiting, calling, queued}
    out = subprocess.run([sys.executable, '-m', 'tool_router.cli', 'trace', 'summary',
                          str(trace_dir)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and 'unfinished requests: 3' in out.stdout, out.stdout + out.stderr


def _complete_lines(trace_dir: Path) -> list:
    from tool_router.executor.traces import parse_line
    out = []
    for path in sorted(Path(trace_dir).glob('*.jsonl')):
        text = path.read_text()
        out += [parse_line(line) for line in text.splitlines(keepends=True)
                if line.endswith('\n') and line.strip()]
    return out


def test_bounded_queue_expiry_late_joiners_and_shutdown(tmp_path):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tool_router.msg import ConfirmationRequest
    ns = f'q{uuid.uuid4().hex[:6]}'
    trace_dir = tmp_path / 'traces'
    proc = executor(trace_dir, ns, 'max_parallel_requests:=1', 'max_queue:=2',
                    'max_selection_age_s:=1.0', 'confirm_timeout_s:=30.0',
                    'max_pending_confirmations_per_tool:=1',
                    'insecure_confirmations:=true')  # unsigned test decisions (docs/SECURITY.md)
    peer = RosPeer()
    try:
        acks = AckWatch(peer, f'/{ns}/executor/acks')
        topic = f'/{ns}/tool_router/selected'
        blocker = peer.select(topic, ['arm_motors'], 'arm')  # holds the only worker
        assert acks.wait(blocker)[0]
        first, second = (peer.select(topic, ['gps_position']) for _ in range(2))
        assert acks.wait(first)[0] and acks.wait(second)[0]
        third = peer.select(topic, ['gps_position'])
        accepted, reason = acks.wait(third)
        assert not accepted and 'queue full' in reason

        # a late joiner (subscribed after the announcement) still gets it, and the list
        late: list = []
        latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        peer.node.create_subscription(ConfirmationRequest, f'/{ns}/executor/confirmation_requests',
                                      late.append, latched)
        assert wait_until(lambda: any(m.request_id == blocker for m in late), 30)
        out = subprocess.run([sys.executable, '-m', 'tool_router.cli', 'confirm', '--list',
                              '--namespace', ns], capture_output=True, text=True, cwd=ROOT,
                             timeout=60)
        assert out.returncode == 0 and f'{blocker}  arm_motors' in out.stdout, out
        time.sleep(1.2)  # the queued ones are now older than max_selection_age_s
        assert peer.confirm(blocker, 'arm_motors', False, 'op',
                            service=f'/{ns}/executor/confirm').success
        assert wait_until(lambda: {first, second} <= {r['request_id'] for r in
                                                      read_records(trace_dir)}, 30)
        by_id = {r['request_id']: r for r in read_records(trace_dir)}
        assert by_id[first]['stop_reason'] == by_id[second]['stop_reason'] == 'expired'
        assert by_id[first]['tools'][0]['outcome'] == 'expired'
        assert by_id[third]['stop_reason'] == 'refused'

        # shutdown: one request waits for an operator, one is queued behind it
        waits = peer.select(topic, ['arm_motors'], 'arm again')
        assert acks.wait(waits)[0]
        assert wait_until(lambda: any(m.request_id == waits for m in late), 30)
        behind = peer.select(topic, ['gps_position'])
        assert acks.wait(behind)[0]
        assert proc.stop(signal.SIGINT) == 0
    finally:
        peer.close()
        proc.stop()
    by_id = {r.request_id: r for r in lines_on_disk(trace_dir) if r.record == 'request'}
    arm = by_id[waits].tools[0]
    assert arm.confirmation.outcome == 'interrupted' and 'shutdown' in arm.message
    assert by_id[behind].stop_reason == 'cancelled_at_shutdown'
    assert not summarize(lines_on_disk(trace_dir))['unfinished']


def test_pending_confirmations_per_tool_are_bounded(tmp_path):
    ns = f'p{uuid.uuid4().hex[:6]}'
    trace_dir = tmp_path / 'traces'
    proc = executor(trace_dir, ns, 'max_parallel_requests:=4', 'confirm_timeout_s:=30.0',
                    'max_pending_confirmations_per_tool:=1')
    peer = RosPeer()
    try:
        acks = AckWatch(peer, f'/{ns}/executor/acks')
        topic = f'/{ns}/tool_router/selected'
        first = peer.select(topic, ['arm_motors'], 'arm')
        assert acks.wait(first)[0]
        assert wait_until(lambda: any(getattr(r, 'event', '') == 'awaiting_confirmation'
                                      for r in _complete_lines(trace_dir)), 30)
        second = peer.select(topic, ['arm_motors'], 'arm again')
        rec = _wait_final(trace_dir, second)
        assert rec['tools'][0]['failure_mode'] == 'confirmation_over_limit'
        assert proc.stop(signal.SIGINT) == 0
    finally:
        peer.close()
        proc.stop()


def _wait_final(trace_dir: Path, rid: str, timeout_s: float = 10.0) -> dict:
    found: list = []

    def look() -> bool:
        found[:] = [r for r in read_records(trace_dir) if r['request_id'] == rid]
        return bool(found)
    assert wait_until(look, timeout_s), f'no final record for {rid}'
    return found[0]
