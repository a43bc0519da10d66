"""How many genuine selections the executor reads while a keyless process floods its topic.

    python benchmarks/flood.py --genuine 100 --rate 10 [--flood-rate 0] [--out results.json]

A simulated vehicle and an executor run as processes in their own namespace. This process
publishes genuine selections, signed by the router's key as the router signs them, each
**once** (no re-send: the router's re-sends are what the per-copy figure is multiplied by),
first with no flood (the control), then while ``test/flooder.py`` (an empty ROS_HOME, no key)
publishes forged selections on the same topic flat out (``--flood-rate 0``) or at a set rate.
Reported, from one run: the flood's rate, the rate at which the executor read it (its
refusals, one by one plus summarized, over the flood's duration), the share of genuine copies
acknowledged with and without the flood, and what that share gives a request the router sends
every 0.25 s within its 2 s ack window (8 copies, if losses are independent).

A copy is lost when DDS overwrites it in the executor's reader history before the executor
takes it: with forged selections arriving at A per second and the executor reading D per
second, about D / (A + D) of the copies survive, whatever the history depth
(docs/SECURITY.md, "Floods").
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'benchmarks'))

from durability import Peer, _start, _stop  # noqa: E402 - the same processes and peer

RESEND_COPIES = 8  # the router's copies within its ack window (2 s / 0.25 s, ros/acks.py)


def _send(peer: Peer, count: int, rate_hz: float, settle_s: float) -> tuple[list[str], float]:
    """Send ``count`` genuine selections once each; (their ids, seconds it took)."""
    sent: list[str] = []
    start = time.monotonic()
    for i in range(count):
        sent.append(peer.send(['battery_status']))
        time.sleep(max(0.0, start + (i + 1) / rate_hz - time.monotonic()))
    elapsed = time.monotonic() - start
    time.sleep(settle_s)  # acks in flight
    return sent, elapsed


def _refusals_read(trace_dir: Path) -> tuple[int, int]:
    """(forged selections the executor read: its refusals on disk, one by one and summarized;
    lines on disk of a forged request id other than its refusal: 0 unless one ran)."""
    from tool_router.executor.traces import read_traces, trace_files
    read = ran = 0
    for path in trace_files([trace_dir]):
        for rec in read_traces(path, []):
            if getattr(rec, 'record', '') != 'security':
                ran += str(getattr(rec, 'request_id', '')).startswith('forged-')
            elif rec.event == 'execute_refused':
                read += 1
            elif rec.event == 'refusals_summarized':
                read += int(rec.detail.split()[0])
    return read, ran


def run(genuine: int = 100, rate_hz: float = 10.0, flood_rate: float = 0.0,
        trace_dir: Path | None = None, settle_s: float = 2.0) -> dict[str, Any]:
    """The control, then the flood; the report."""
    ns = f'flood{os.getpid()}'
    base = Path(trace_dir or tempfile.mkdtemp(prefix='flood-'))
    traces = base / 'traces'
    empty_home = base / 'mallory'
    empty_home.mkdir(parents=True, exist_ok=True)
    sim = _start('tool_router.ros.sim_vehicle', ns, 'state_period_s:=5.0',
                 ready='simulated vehicle ready')
    executor = _start('tool_router.ros.executor_node', ns, f'trace_dir:={traces}',
                      'require_signed_execute:=false', 'max_parallel_requests:=4',
                      ready='executor ready')
    peer = Peer(ns)
    flooder: subprocess.Popen[str] | None = None
    flooder_out: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while not peer.acked and time.monotonic() < deadline:  # readers and writers matched
            peer.send(['battery_status'])
            time.sleep(0.5)
        if not peer.acked:
            raise RuntimeError('the executor never acknowledged a genuine selection')
        peer.acked.clear()
        control, _ = _send(peer, genuine, rate_hz, settle_s)
        control_acked = len(set(control) & peer.acked)
        env = {**os.environ, 'ROS_HOME': str(empty_home),
               'PYTHONPATH': f'{ROOT / "test"}{os.pathsep}{ROOT}',
               'FLOOD_TOPIC': f'/{ns}/tool_router/selected', 'FLOOD_RATE': str(flood_rate)}
        flooder = subprocess.Popen([sys.executable, '-u', '-m', 'flooder'], env=env, cwd=ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        flooding = threading.Event()

        def read() -> None:
            assert flooder is not None and flooder.stdout is not None
            for line in flooder.stdout:
                flooder_out.append(line.rstrip())
                if line.startswith('flooding'):
                    flooding.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        if not flooding.wait(60):
            raise RuntimeError(f'the flooder did not start: {flooder_out[-5:]}')
        time.sleep(2.0)  # the executor's reader is in the flood before the first genuine copy
        flooded, send_s = _send(peer, genuine, rate_hz, settle_s)
        flooded_acked = len(set(flooded) & peer.acked)
        os.killpg(flooder.pid, signal.SIGINT)
        flooder.wait(timeout=30)
        reader.join(timeout=10)
    finally:
        if flooder is not None and flooder.poll() is None:
            os.killpg(flooder.pid, signal.SIGKILL)
        peer.close()
        code = _stop(executor)  # writes the last window's summary
        _stop(sim)
    sent_line = next((line for line in flooder_out if line.startswith('sent ')), '')
    if not sent_line:
        raise RuntimeError(f'the flooder did not report: {flooder_out[-5:]}')
    forged, flood_s = int(sent_line.split()[1]), float(sent_line.split()[3])
    read, forged_ran = _refusals_read(traces)
    per_copy = flooded_acked / genuine
    return {
        'genuine_per_phase': genuine, 'genuine_rate_hz': rate_hz, 'flood_rate_asked': flood_rate,
        'forged_sent': forged, 'flood_s': round(flood_s, 1),
        'flood_rate_hz': round(forged / max(flood_s, 1e-9)),
        'forged_read_by_executor': read, 'forged_lines_not_refusals': forged_ran,
        'executor_read_rate_hz': round(read / max(flood_s, 1e-9)),
        'control_acknowledged': control_acked, 'flooded_acknowledged': flooded_acked,
        'per_copy_survival': round(per_copy, 4),
        'request_served_within_ack_window': round(1 - (1 - per_copy) ** RESEND_COPIES, 4),
        'genuine_send_s': round(send_s, 1), 'executor_exit_code': code,
        'load_average': [round(x, 2) for x in os.getloadavg()], 'trace_dir': str(traces),
    }


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--genuine', type=int, default=100, help='genuine selections per phase')
    p.add_argument('--rate', type=float, default=10.0, help='genuine selections per second')
    p.add_argument('--flood-rate', type=float, default=0.0,
                   help='forged selections per second (0 = as fast as one process can)')
    p.add_argument('--out', help='write the JSON report here too')
    args = p.parse_args(argv)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    report = run(args.genuine, args.rate, args.flood_rate)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + '\n')
    return 0 if report['control_acknowledged'] == report['genuine_per_phase'] else 1


if __name__ == '__main__':
    raise SystemExit(main())
