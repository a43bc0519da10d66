"""How many genuine selections the executor reads while a keyless process floods its topic.

    python benchmarks/flood.py --genuine 100 --rate 10 [--flood-rate 0] [--out results.json]

A simulated vehicle and an executor run as processes in their own namespace. This process
publishes genuine selections, signed by the router's key as the router signs them, each
**once** first with no flood (the control), then while ``test/flooder.py`` (an empty ROS_HOME,
no key) publishes forged selections on the same topic flat out (``--flood-rate 0``) or at a set
rate; then, still in the flood, sends each again every 0.25 s and every 0.1 s until it is
acknowledged or its 2 s window is over, as the router's Outbox does (tool_router/ros/acks.py).
Reported, from one run: the flood's rate, the rate at which the executor read it (its
refusals, one by one plus summarized, over the flood's duration), the share of genuine copies
acknowledged with and without the flood, and the share of re-sent requests acknowledged
within their window, beside what independent losses would predict.

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

ACK_WINDOW_S = 2.0  # the router's default executor_ack_timeout_s


def _message(peer: Peer) -> tuple[str, object]:
    """A genuine selection as the router signs it (request id, message)."""
    import uuid

    from tool_router.common import signing
    from tool_router.ros.convert import plain_selection
    rid = f'r-{uuid.uuid4().hex[:12]}'
    msg = plain_selection(rid, 'flood', ['battery_status'], policy='bench')
    msg.router_signature = signing.selection_signature(msg)
    msg.stamp = peer.node.get_clock().now().to_msg()
    return rid, msg


def _send_as_the_router(peer: Peer, count: int, rate_hz: float, resend_s: float
                        ) -> tuple[list[str], int]:
    """Send ``count`` selections, each again every ``resend_s`` until acknowledged or its
    2 s window is over (the router's Outbox, tool_router/ros/acks.py); (ids, copies sent)."""
    pending: dict[str, tuple[object, float, float]] = {}  # id -> (message, deadline, due)
    sent: list[str] = []
    copies = 0
    start = time.monotonic()
    while len(sent) < count or pending:
        now = time.monotonic()
        if len(sent) < count and now >= start + len(sent) / rate_hz:
            rid, msg = _message(peer)
            peer.pub.publish(msg)
            copies += 1
            sent.append(rid)
            pending[rid] = (msg, now + ACK_WINDOW_S, now + resend_s)
        for rid, (msg, deadline, due) in list(pending.items()):
            if rid in peer.acked or now >= deadline:
                del pending[rid]
            elif now >= due:
                peer.pub.publish(msg)
                copies += 1
                pending[rid] = (msg, deadline, now + resend_s)
        time.sleep(0.01)
    time.sleep(0.5)  # late acks (counted: the router would have taken them in its window)
    return sent, copies


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
        trace_dir: Path | None = None, settle_s: float = 2.0,
        resend_s: tuple[float, ...] = (0.25, 0.1)) -> dict[str, Any]:
    """The control, then the flood: once each, then re-sent as the router does; the report."""
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
        resent: dict[str, dict[str, float]] = {}
        for every in resend_s:
            ids, copies = _send_as_the_router(peer, genuine, rate_hz, every)
            resent[f'{every:g}'] = {'served': len(set(ids) & peer.acked) / genuine,
                                    'copies_per_request': round(copies / genuine, 2)}
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
        # each request re-sent every N s within its 2 s window, as the router's Outbox does:
        # the share acknowledged, measured, and what independent losses would predict
        'resent_every_s': {k: {**v, 'predicted': round(1 - (1 - per_copy) ** int(
            ACK_WINDOW_S / float(k)), 4)} for k, v in resent.items()},
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
    # a domain of its own (tool_router/ros/domain.py): a flood must never reach another graph
    from tool_router.ros.domain import claim_domain
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ['ROS_DOMAIN_ID'] = os.environ.get('TOOL_ROUTER_BENCH_DOMAIN', '').strip() or str(
        claim_domain())
    report = run(args.genuine, args.rate, args.flood_rate)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + '\n')
    return 0 if report['control_acknowledged'] == report['genuine_per_phase'] else 1


if __name__ == '__main__':
    raise SystemExit(main())
