"""Dispatch latency of the executor: selection received -> simulated vehicle answered.

Starts ``sim_vehicle`` and ``executor_node`` (execute mode) as processes,
publishes N selections of one allowed sensor one after another (each waits
for its ExecutionTrace), then reads the executor's JSONL trace records and
prints the median and p99 of

* receive -> answer: ``tools[0].finished - stamps.received`` (executor clock),
* call: the Trigger round trip measured around ``call_async`` (``latency_ms``).

    python benchmarks/executor_latency.py [-n 200] [--tool battery_status]
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
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tool_router.ros.domain import private_domain  # noqa: E402

private_domain()


def start(module: str, *params: str) -> subprocess.Popen:
    """Run a node module with ``-p`` parameters in its own process group."""
    args = [a for p in params for a in ('-p', p)]
    return subprocess.Popen([sys.executable, '-m', module, '--ros-args', *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def main() -> int:
    """Run the benchmark and print the figures (also as one JSON line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('-n', type=int, default=200, help='measured dispatches (>= 100)')
    parser.add_argument('--warmup', type=int, default=10)
    parser.add_argument('--tool', default='battery_status')
    args = parser.parse_args()

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from tool_router.executor.traces import read_traces, trace_files
    from tool_router.common.stats import percentiles
    from tool_router.common import signing
    from tool_router.msg import ExecutionTrace, SelectedCapabilities
    from tool_router.ros.convert import plain_selection

    trace_dir = Path(tempfile.mkdtemp(prefix='executor-latency-'))
    procs = [start('tool_router.ros.sim_vehicle'),
             start('tool_router.ros.executor_node', 'mode:=execute', f'trace_dir:={trace_dir}',
                   'selection_topic:=/bench/selected',
                   'require_signed_execute:=false')]  # measures dispatch, not signatures
    rclpy.init()
    node = Node('executor_latency_bench')
    done: dict[str, threading.Event] = {}
    node.create_subscription(ExecutionTrace, '/executor/traces',
                             lambda m: done.get(m.request_id, threading.Event()).set(), 50)
    pub = node.create_publisher(SelectedCapabilities, '/bench/selected', 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        deadline = time.monotonic() + 30
        while pub.get_subscription_count() == 0 or node.count_publishers('/executor/traces') == 0:
            if time.monotonic() > deadline:
                raise SystemExit('executor did not come up')
            time.sleep(0.05)
        measured: list[str] = []
        for i in range(args.warmup + args.n):
            rid = f'bench-{uuid.uuid4().hex[:10]}'
            done[rid] = threading.Event()
            msg = plain_selection(rid, 'battery?', [args.tool], policy='bench', score=1.0)
            msg.router_signature = signing.selection_signature(msg)  # as the router signs
            # again every 0.5 s until traced, as the router re-sends until acknowledged: the
            # executor's reader is best effort (the first sample after discovery can be lost);
            # a copy is answered from the first and runs once
            for _ in range(20):
                pub.publish(msg)
                if done[rid].wait(0.5):
                    break
            else:
                raise SystemExit(f'no trace for {rid}')
            if i >= args.warmup:
                measured.append(rid)
    finally:
        executor.shutdown(timeout_sec=1)
        node.destroy_node()
        rclpy.try_shutdown()
        for proc in procs:
            os.killpg(proc.pid, signal.SIGINT)
        for proc in procs:
            proc.wait(timeout=15)
    wanted = set(measured)
    records = [r for f in trace_files([trace_dir]) for r in read_traces(f)
               if r.record == 'request' and r.request_id in wanted]  # not the journal events
    tools = [r.tools[0] for r in records]
    bad = [t.outcome for t in tools if t.outcome != 'dispatched']
    if bad:
        raise SystemExit(f'{len(bad)} dispatches did not succeed: {set(bad)}')
    e2e = [(t.finished - r.stamps.received) * 1000 for r, t in zip(records, tools)]
    call = [t.latency_ms for t in tools]
    p_e2e, p_call = percentiles(e2e, (50, 99)), percentiles(call, (50, 99))
    print(f'executor dispatch latency, {args.tool}, n={len(records)} (execute mode, sim_vehicle)')
    print(f"  receive -> sim answer: median {p_e2e['p50']:.2f} ms, p99 {p_e2e['p99']:.2f} ms")
    print(f"  service call only:     median {p_call['p50']:.2f} ms, p99 {p_call['p99']:.2f} ms")
    print(json.dumps({'n': len(records), 'tool': args.tool,
                      'receive_to_answer_ms': p_e2e, 'call_ms': p_call}))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
