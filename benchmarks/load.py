"""Load over ROS: N clients x M requests against ``tool-router serve``.

    python benchmarks/load.py --clients 32 --requests 500             # the issue's target load
    python benchmarks/load.py --clients 8 --requests 300 --hog 2      # 2 CPU-burning processes
    python benchmarks/load.py --clients 2 --requests 5 --no-executor  # smoke (CI)

Starts ``tool-router serve`` (router + executor; ``--no-executor`` for the router alone)
with an in-memory index, waits for ``/route_request``, then each client (its own rclpy
service client, its own thread) sends its M requests one after another, drawn from the
development split. A call without an answer within ``--timeout`` seconds is *unanswered*;
an answer ``success=false`` whose message says "busy" is a *busy* answer (the node's
overload reply); other ``success=false`` answers are *refused*. Reports throughput,
latency percentiles of the answered calls, the counts, and the resident memory of the
served processes before and after the load. ``--hog K`` runs K busy-loop processes beside
it for the whole run (a co-located CPU hog).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tool_router.common import stats  # noqa: E402
from tool_router.ros import domain as ros_domain  # noqa: E402


def private_domain() -> None:
    """A ROS domain of our own on the loopback, so other nodes on the machine answer nothing.

    TOOL_ROUTER_BENCH_DOMAIN picks it; otherwise a free one is claimed (tool_router/ros/domain.py),
    whatever ROS_DOMAIN_ID says (a benchmark never joins the caller's graph).
    """
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    explicit = os.environ.get('TOOL_ROUTER_BENCH_DOMAIN', '').strip()
    os.environ['ROS_DOMAIN_ID'] = explicit or str(ros_domain.claim_domain())


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f'/proc/{p}/task'):
                with open(f'/proc/{p}/task/{task}/children') as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except OSError:
            continue
    return out


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants, MiB."""
    total = 0
    for p in descendants(pid):
        try:
            with open(f'/proc/{p}/status') as fh:
                for line in fh:
                    if line.startswith('VmRSS:'):
                        total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def wait_serving(log_path: Path, proc: subprocess.Popen, timeout_s: float = 600) -> None:
    """Wait for the router node's 'serving /route_request' line (it is active then)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if 'serving /route_request' in log_path.read_text(errors='replace'):
            return
        time.sleep(0.5)
    raise RuntimeError(f'router node is not serving (log: {log_path})')


def texts(n: int) -> list[str]:
    rows = (ROOT / 'benchmarks' / 'data' / 'dev.jsonl').read_text(encoding='utf-8').splitlines()
    pool = [json.loads(r)['request'] for r in rows if r.strip()]
    return [pool[i % len(pool)] for i in range(n)]


def percentile(values: list[float], q: float) -> float:
    return round(stats.percentile(values, q), 1)


def run(args: argparse.Namespace) -> dict[str, Any]:
    import rclpy
    from rclpy.executors import MultiThreadedExecutor

    from tool_router.ros.common import client_qos
    from tool_router.srv import RouteRequest

    private_domain()
    cmd = [sys.executable, '-m', 'tool_router.cli', 'serve', '--param', 'chroma_ephemeral:=true']
    if args.no_executor:
        cmd.append('--no-executor')
    log_path = Path(os.environ.get('TMPDIR', '/tmp')) / f'load_serve_{os.getpid()}.log'
    log = open(log_path, 'w')
    serve = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                             start_new_session=True, env=dict(os.environ, PYTHONUNBUFFERED='1'))
    hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass'], start_new_session=True)
            for _ in range(args.hog)]
    rclpy.init()
    node = rclpy.create_node('load_clients')
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    lock = threading.Lock()
    latencies: list[float] = []
    late: list[Any] = []  # unanswered futures: answered after the timeout = late, not lost
    counts = {'sent': 0, 'answered': 0, 'success': 0, 'busy': 0, 'refused': 0, 'unanswered': 0,
              'late': 0, 'probe_failed': 0, 'probes': 0}
    diag: dict[str, str] = {}
    try:
        wait_serving(log_path, serve)
        def on_diag(msg: Any) -> None:
            for status in msg.status:
                if status.name == 'tool_router: router':
                    diag.clear()
                    diag.update({kv.key: kv.value for kv in status.values})

        from diagnostic_msgs.msg import DiagnosticArray
        node.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 10)
        # A deep reply history, as tool_router's own client has (tool_router/ros/common.py).
        clients = [node.create_client(RouteRequest, '/route_request', qos_profile=client_qos())
                   for _ in range(args.clients)]
        if not clients[0].wait_for_service(timeout_sec=60):
            raise RuntimeError(f'/route_request did not come up (log: {log_path})')
        warm = clients[0].call_async(RouteRequest.Request(text='take off'))
        deadline = time.monotonic() + 120
        while not warm.done() and time.monotonic() < deadline:
            time.sleep(0.05)
        rss_before = rss_mib(serve.pid)
        batch = texts(args.requests)

        def client_loop(client: Any) -> None:
            # Probe with empty requests until one is answered: until the server's reply
            # writer has matched this client, a reply goes nowhere (docs/PERFORMANCE.md).
            for _ in range(60):
                with lock:
                    counts['probes'] += 1
                probe = client.call_async(RouteRequest.Request(text=''))
                until = time.monotonic() + 1.0
                while not probe.done() and time.monotonic() < until:
                    time.sleep(0.02)
                if probe.done():
                    break
            else:
                with lock:
                    counts['probe_failed'] += 1
            for text in batch:
                event = threading.Event()
                sent = time.perf_counter()
                future = client.call_async(RouteRequest.Request(text=text))
                future.add_done_callback(lambda _f: event.set())
                answered = event.wait(args.timeout)
                elapsed = (time.perf_counter() - sent) * 1000.0
                with lock:
                    counts['sent'] += 1
                    if not answered:
                        counts['unanswered'] += 1
                        late.append(future)
                        continue
                    resp = future.result()
                    if resp is None:
                        counts['unanswered'] += 1
                        continue
                    counts['answered'] += 1
                    latencies.append(elapsed)
                    if resp.success:
                        counts['success'] += 1
                    elif 'busy' in resp.message.lower():
                        counts['busy'] += 1
                    else:
                        counts['refused'] += 1

        start = time.perf_counter()
        threads = [threading.Thread(target=client_loop, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        rss_after = rss_mib(serve.pid)
        time.sleep(min(args.timeout, 5.0) if late else 2.0)  # a fresh /diagnostics message
        counts['late'] = sum(1 for f in late if f.done() and f.result() is not None)
        alive = serve.poll() is None
    finally:
        for h in hogs:
            h.kill()
            h.wait()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGINT)
        try:
            code = serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            code = serve.wait()
        log.close()
    served_log = log_path.read_text(errors='replace')
    return {
        'answers_dropped_warned': served_log.count('failed to send response'),
        # what the router counted (its /diagnostics): calls it received = ok + rejected
        # + errors + busy; compare with sent + probes + 1 warm-up call
        'router_counters': {k: diag.get(k, '') for k in
                            ('ok', 'rejected', 'errors', 'busy', 'in_flight')},
        'clients': args.clients,
        'requests_per_client': args.requests,
        'hog_processes': args.hog,
        'executor': not args.no_executor,
        'counts': counts,
        'throughput_per_s': round(counts['answered'] / wall, 1) if wall else 0.0,
        'wall_s': round(wall, 1),
        'latency_ms': {f'p{q}': percentile(latencies, q) for q in (50, 90, 99, 100)},
        'rss_mib_before': rss_before,
        'rss_mib_after': rss_after,
        'served_alive_at_end': alive,
        'serve_exit_code': code,
        'cpu_count': os.cpu_count(),
        'loadavg_at_end': os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--clients', type=int, default=32)
    ap.add_argument('--requests', type=int, default=500, help='requests per client')
    ap.add_argument('--hog', type=int, default=0, help='co-located busy-loop processes')
    ap.add_argument('--timeout', type=float, default=30.0, help='seconds before unanswered')
    ap.add_argument('--no-executor', action='store_true', help='serve the router alone')
    ap.add_argument('--out', default='', help='write the JSON report here')
    args = ap.parse_args(argv)
    report = run(args)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + '\n', encoding='utf-8')
    print(text)
    return 1 if report['counts']['unanswered'] or not report['served_alive_at_end'] else 0


if __name__ == '__main__':
    sys.exit(main())
