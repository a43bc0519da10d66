"""Routing latency in-process and over ROS 2 (a real router node, a real rclpy client).

    PYTHONPATH=. python benchmarks/route_latency.py [-n 200] [--policy lcr]

Routes the first n development requests (cycled) both ways in one run and prints the median
and p99. In-process = Router.route(); over ROS = the client's round trip of /route_request
(DDS on loopback), with the node's own latency_ms beside it. Figures depend on the machine:
compare the two columns of one run, not runs on different machines.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def summary(name: str, values: list[float]) -> str:
    from tool_router.common.stats import percentiles

    q = percentiles(values, (50, 99))
    return (f'{name:34s} n={len(values):4d}  median {q["p50"]:7.2f} ms  '
            f'p99 {q["p99"]:7.2f} ms')


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('-n', type=int, default=200)
    ap.add_argument('--policy', default='')
    args = ap.parse_args()
    from tool_router.ros.domain import private_domain

    private_domain()
    lines = (ROOT / 'benchmarks' / 'data' / 'dev.jsonl').read_text().splitlines()
    texts = [json.loads(line)['request'] for line in lines]
    texts = [texts[i % len(texts)] for i in range(args.n)]

    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router
    router = Router(load_router_config(overrides={'chroma_ephemeral': True}))
    policy = args.policy or router.config.policy
    for t in texts[:10]:
        router.route(t, policy)  # warm up
    in_process = []
    for t in texts:
        start = time.perf_counter()
        router.route(t, policy)
        in_process.append((time.perf_counter() - start) * 1000)

    node = subprocess.Popen(
        [sys.executable, '-m', 'tool_router.ros.router_node', '--ros-args',
         '-p', 'chroma_ephemeral:=true'],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, 'PYTHONPATH': str(ROOT)})
    try:
        from tool_router.ros.client import RouteClient
        with RouteClient(wait_s=120) as client:
            for t in texts[:10]:
                client.call(t, policy)
            round_trip, in_node = [], []
            for t in texts:
                start = time.perf_counter()
                resp = client.call(t, policy)
                round_trip.append((time.perf_counter() - start) * 1000)
                in_node.append(resp.latency_ms)
    finally:
        node.terminate()
        node.wait(timeout=20)
    print(f'policy {policy}, {args.n} development requests')
    print(summary('in-process Router.route', in_process))
    print(summary('over ROS: client round trip', round_trip))
    print(summary('over ROS: node latency_ms', in_node))


if __name__ == '__main__':
    main()
