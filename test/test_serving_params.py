"""``serving.threads`` and ``serving.queue_depth`` follow ``-p`` (not only router.yaml)."""
from __future__ import annotations

import pytest

from procs import NodeProcess

pytestmark = pytest.mark.slow  # starts a router node process


def test_serving_threads_and_queue_depth_follow_ros_parameters():
    node = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
                       '-p', 'serving.threads:=3', '-p', 'serving.queue_depth:=50',
                       '-p', 'policy:=cdbv2')
    try:
        assert node.wait_for('serving /route_request', 180), node.output[-3000:]
        line = next(x for x in node.lines if 'serving /route_request' in x)
        # router.yaml says 16 threads and depth 1000: the executor was built from -p
        assert ('(3 executor threads and 64 for answers waiting for an executor ack, '
                'queue depth 50)') in line, line
    finally:
        node.stop()


def test_serving_nice_sets_every_thread_of_the_router_process():
    import os

    nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 3)  # a higher value is always permitted
    node = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
                       '-p', f'serving.nice:={nice}', '-p', 'policy:=cdbv2')
    try:
        assert node.wait_for('serving /route_request', 180), node.output[-3000:]
        assert f'process priority: nice {nice}' in node.output
        tasks = f'/proc/{node.proc.pid}/task'
        values = {os.getpriority(os.PRIO_PROCESS, int(t)) for t in os.listdir(tasks)}
        assert values == {nice}, values  # DDS, executor and encoder threads alike
    finally:
        node.stop()
