"""Default-QoS clients: N client *processes* x M calls, on /route_request and on the topic path.

    python benchmarks/default_qos_clients.py --clients 32 --calls 20      # the issue's figure
    python benchmarks/default_qos_clients.py --clients 4 --calls 5        # smoke (CI)

A third-party client (``ros2 service call``, a C++ node, a plain rclpy node) uses rclpy's
default QoS: a reply history of KEEP_LAST 10. Each client here is such a process of its own
(its own DDS participant), written as a third party would write it, nothing of tool_router's
client code:

* ``service``: ``create_client(RouteRequest, '/route_request')`` with the default QoS,
  ``wait_for_service``, then one call after another;
* ``topic``: a default-QoS subscription to ``/tool_router/answers/<client_id>`` and a
  default-QoS publisher of Request on ``/tool_router/requests`` (with ``client_id`` and a
  ``request_id``), once both have matched; one request after another, each waiting for the
  answer with its request_id (docs/PERFORMANCE.md, "Default-QoS clients").

Starts ``tool-router serve --no-executor`` (the router alone, in-memory index) on a private
ROS domain. A call without an answer within ``--timeout`` s is *unanswered*; "busy" answers
are counted apart. Prints and writes (``--out``) one JSON report with both paths.
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
sys.path.insert(0, str(ROOT / 'benchmarks'))

from load import private_domain, texts, wait_serving  # noqa: E402
from tool_router.common import stats  # noqa: E402


def worker(path: str, client: int, calls: int, timeout_s: float) -> dict[str, Any]:
    """One client process: ``calls`` requests on ``path``; the counts and latencies."""
    import rclpy

    from tool_router.msg import Request, RouteAnswer
    from tool_router.srv import RouteRequest

    rclpy.init()
    node = rclpy.create_node(f'default_qos_client_{client}')
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    counts = {'sent': 0, 'answered': 0, 'success': 0, 'busy': 0, 'refused': 0, 'unanswered': 0}
    latencies: list[float] = []
    batch = texts(calls * (client + 1))[calls * client:]
    try:
        if path == 'service':
            cli = node.create_client(RouteRequest, '/route_request')  # rclpy's default QoS
            if not cli.wait_for_service(timeout_sec=60.0):
                raise RuntimeError('/route_request never came up')

            def ask(text: str, rid: str) -> Any:
                done = threading.Event()
                future = cli.call_async(RouteRequest.Request(text=text, request_id=rid))
                future.add_done_callback(lambda _f: done.set())
                return future.result() if done.wait(timeout_s) else None
        else:
            cid = f'bench{os.getpid()}'
            answers: dict[str, Any] = {}
            arrived = threading.Condition()

            def on_answer(msg: Any) -> None:
                with arrived:
                    answers[msg.request_id] = msg
                    arrived.notify_all()
            sub = node.create_subscription(RouteAnswer, f'/tool_router/answers/{cid}',
                                           on_answer, 10)  # the default depth
            pub = node.create_publisher(Request, '/tool_router/requests', 10)
            deadline = time.monotonic() + 60.0
            while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
                time.sleep(0.02)  # the router's reader must have matched ours
            del sub

            def ask(text: str, rid: str) -> Any:
                pub.publish(Request(text=text, request_id=rid, client_id=cid))
                with arrived:
                    arrived.wait_for(lambda: rid in answers, timeout_s)
                    return answers.pop(rid, None)
        for i, text in enumerate(batch):
            sent = time.perf_counter()
            answer = ask(text, f'c{client}-{os.getpid()}-{i}')
            counts['sent'] += 1
            if answer is None:
                counts['unanswered'] += 1
                continue
            counts['answered'] += 1
            latencies.append((time.perf_counter() - sent) * 1000.0)
            if answer.success:
                counts['success'] += 1
            elif 'busy' in answer.message.lower():
                counts['busy'] += 1
            else:
                counts['refused'] += 1
    finally:
        executor.shutdown()
        spinner.join(timeout=10.0)  # returned before the context goes (no abort at exit)
        node.destroy_node()
        rclpy.try_shutdown()
    return {'counts': counts, 'latencies_ms': latencies}


def run_path(path: str, args: argparse.Namespace) -> dict[str, Any]:
    """All clients of one path at once, each its own process."""
    procs = [subprocess.Popen(
        [sys.executable, __file__, '--worker', path, '--client', str(k),
         '--calls', str(args.calls), '--timeout', str(args.timeout)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        for k in range(args.clients)]
    start = time.perf_counter()
    totals = {'sent': 0, 'answered': 0, 'success': 0, 'busy': 0, 'refused': 0,
              'unanswered': 0, 'client_failures': 0}
    latencies: list[float] = []
    for proc in procs:
        out, err = proc.communicate(timeout=args.calls * args.timeout + 300)
        lines = [line for line in out.splitlines() if line.startswith('{')]
        if proc.returncode != 0 or not lines:
            totals['client_failures'] += 1
            sys.stderr.write(err[-1500:])
            continue
        result = json.loads(lines[-1])
        for key, value in result['counts'].items():
            totals[key] += value
        latencies += result['latencies_ms']
    wall = time.perf_counter() - start
    return {'counts': totals, 'wall_s': round(wall, 1),
            'latency_ms': {f'p{q}': round(stats.percentile(latencies, q), 1) if latencies
                           else None for q in (50, 90, 99)}}


def run(args: argparse.Namespace) -> dict[str, Any]:
    private_domain()
    cmd = [sys.executable, '-m', 'tool_router.cli', 'serve', '--no-executor',
           '--param', 'chroma_ephemeral:=true']
    log_path = Path(os.environ.get('TMPDIR', '/tmp')) / f'qos_serve_{os.getpid()}.log'
    log = open(log_path, 'w')
    serve = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                             start_new_session=True, env=dict(os.environ, PYTHONUNBUFFERED='1'))
    report: dict[str, Any] = {'clients': args.clients, 'calls_per_client': args.calls,
                              'timeout_s': args.timeout, 'cpu_count': os.cpu_count()}
    try:
        wait_serving(log_path, serve)
        for path in args.paths.split(','):
            report[path] = run_path(path, args)
        report['router_alive_at_end'] = serve.poll() is None
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGINT)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()
        log.close()
    report['loadavg_at_end'] = os.getloadavg()[0]
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--clients', type=int, default=32)
    ap.add_argument('--calls', type=int, default=20, help='calls per client')
    ap.add_argument('--timeout', type=float, default=30.0, help='seconds before unanswered')
    ap.add_argument('--paths', default='service,topic', help='service, topic or both')
    ap.add_argument('--out', default='', help='write the JSON report here')
    ap.add_argument('--worker', default='', help=argparse.SUPPRESS)
    ap.add_argument('--client', type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.client, args.calls, args.timeout)))
        return 0
    report = run(args)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + '\n', encoding='utf-8')
    print(text)
    topic = report.get('topic', {}).get('counts', {})
    return 1 if topic.get('unanswered') or topic.get('client_failures') else 0


if __name__ == '__main__':
    sys.exit(main())
