"""Kill the executor with SIGKILL again and again under a request stream; check the traces.

    python benchmarks/durability.py --kills 20 --rate 40 [--out results.json]

A simulated vehicle and an executor run as processes in their own namespace; this
process publishes SelectedCapabilities at ``--rate`` per second (every
``--critical-every``-th holds ``arm_motors``, which waits for an operator nobody is,
so requests sit in every state: received/queued, awaiting confirmation,
dispatching, finished) and listens to the executor's SelectionAck. After a random
0.5-3 s of stream the executor is SIGKILLed and restarted on the same trace
directory. At the end every line of every trace file is parsed strictly and each
acknowledged request id is looked up: an acknowledged request with no line on disk
is a loss. The report gives sent / acknowledged / on disk / lost, bad lines, and
after each kill the unfinished requests so far (cumulative) by their last state.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _start(module: str, ns: str, *params: str, ready: str, timeout_s: float = 90.0
           ) -> subprocess.Popen[str]:
    cmd = [sys.executable, '-u', '-m', module, '--ros-args', '-r', f'__ns:=/{ns}']
    for p in params:
        cmd += ['-p', p]
    env = {**os.environ, 'PYTHONPATH': f'{ROOT}{os.pathsep}{os.environ.get("PYTHONPATH", "")}'}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=ROOT, start_new_session=True)
    seen = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if ready in line:
                seen.set()
    threading.Thread(target=read, daemon=True).start()
    if not seen.wait(timeout_s):
        _stop(proc, signal.SIGKILL)
        raise RuntimeError(f'{module} did not start within {timeout_s:.0f} s')
    return proc


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGINT) -> int:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


class Peer:
    """Publishes selections, collects acks (its own rclpy context and spinning thread)."""

    def __init__(self, ns: str) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node

        from tool_router.msg import SelectedCapabilities, SelectionAck
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = Node(f'durability_{uuid.uuid4().hex[:8]}', context=self.context)
        self.pub = self.node.create_publisher(SelectedCapabilities, f'/{ns}/tool_router/selected',
                                              100)
        self.acked: set[str] = set()
        self.refused: set[str] = set()
        self._lock = threading.Lock()
        self.node.create_subscription(SelectionAck, f'/{ns}/executor/acks', self._on_ack, 1000)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - context shut down at the end
            pass

    def _on_ack(self, msg: Any) -> None:
        with self._lock:
            (self.acked if msg.accepted else self.refused).add(msg.request_id)

    def send(self, tools: list[str]) -> str:
        from tool_router.common import signing
        from tool_router.ros.convert import plain_selection
        rid = f'd-{uuid.uuid4().hex[:12]}'
        msg = plain_selection(rid, 'durability', tools, policy='bench')
        # as the router signs what it selects
        msg.router_signature = signing.selection_signature(msg)
        msg.stamp = self.node.get_clock().now().to_msg()
        self.pub.publish(msg)
        return rid

    def subscribed(self) -> bool:
        return self.pub.get_subscription_count() > 0

    def close(self) -> None:
        import rclpy
        self.executor.shutdown(timeout_sec=2)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def run(kills: int = 10, rate_hz: float = 20.0, critical_every: int = 4, seed: int = 7,
        trace_dir: Path | None = None) -> dict[str, Any]:
    """Stream, kill ``kills`` times, restart, then check the traces against the acks."""
    from tool_router.executor.traces import fold, read_traces, trace_files

    rng = random.Random(seed)
    ns = f'dur{os.getpid()}'
    trace_dir = Path(trace_dir or tempfile.mkdtemp(prefix='durability-')) / 'traces'
    executor_params = (f'trace_dir:={trace_dir}', 'require_signed_execute:=false',
                       'confirm_timeout_s:=30.0',
                       'call_timeout_s:=3.0', 'max_parallel_requests:=8')
    sim = _start('tool_router.ros.sim_vehicle', ns, 'state_period_s:=5.0',
                 ready='simulated vehicle ready')
    peer = Peer(ns)
    sent: list[str] = []
    kill_states: list[dict[str, int]] = []
    try:
        for round_ in range(kills + 1):
            executor = _start('tool_router.ros.executor_node', ns, *executor_params,
                              ready='executor ready')
            deadline = time.monotonic() + 15
            while not peer.subscribed() and time.monotonic() < deadline:
                time.sleep(0.02)
            stream_s = rng.uniform(0.5, 3.0)
            end = time.monotonic() + stream_s
            i = 0
            while time.monotonic() < end:
                i += 1
                tools = (['arm_motors', 'takeoff'] if i % critical_every == 0
                         else ['battery_status', 'gps_position'])
                sent.append(peer.send(tools))
                time.sleep(1.0 / rate_hz)
            time.sleep(0.2)  # acks in flight
            if round_ < kills:
                _stop(executor, signal.SIGKILL)
                views = fold(_complete_lines(trace_dir))
                states: dict[str, int] = {}
                for view in views.values():
                    if not view.finished:
                        key = view.last_state.split(' ')[0]
                        states[key] = states.get(key, 0) + 1
                kill_states.append(states)
            else:
                _stop(executor, signal.SIGINT)
    finally:
        peer.close()
        _stop(sim)
    bad: list[str] = []
    lines = [rec for path in trace_files([trace_dir]) for rec in read_traces(path, bad)]
    on_disk = {getattr(rec, 'request_id', '') for rec in lines}
    acked = set(peer.acked)
    lost = sorted(acked - on_disk)
    unfinished = [v for v in fold(lines).values() if not v.finished]
    return {
        'kills': kills, 'rate_hz': rate_hz, 'critical_every': critical_every,
        'sent': len(sent), 'acknowledged': len(acked), 'refused': len(peer.refused),
        'acknowledged_on_disk': len(acked & on_disk), 'lost': len(lost),
        'lost_ids': lost[:20], 'lines': len(lines), 'bad_lines': len(bad),
        'bad_line_examples': bad[:5], 'unfinished_at_end': len(unfinished),
        'unfinished_after_each_kill': kill_states, 'trace_dir': str(trace_dir),
    }


def _complete_lines(trace_dir: Path) -> list[Any]:
    """Every complete, valid line so far (the last may be mid-write while polling)."""
    from tool_router.executor.traces import read_traces, trace_files
    return [rec for path in trace_files([trace_dir]) for rec in read_traces(path, [])]


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--kills', type=int, default=10)
    p.add_argument('--rate', type=float, default=20.0, help='selections per second')
    p.add_argument('--critical-every', type=int, default=4)
    p.add_argument('--seed', type=int, default=7)
    p.add_argument('--out', help='write the JSON report here too')
    args = p.parse_args(argv)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    report = run(args.kills, args.rate, args.critical_every, args.seed)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + '\n')
    return 0 if report['lost'] == 0 and report['bad_lines'] == 0 else 1


if __name__ == '__main__':
    raise SystemExit(main())
