"""An execute request waiting for its executor ack holds no serving capacity (issue 13).

The router (a real process) may route 2 requests at once (serving.max_in_flight);
a stand-in executor process (test/slow_acker.py) acks nothing until it holds 3
selections. When the router held a serving slot (and a thread) while waiting for
an ack, the third request could never be routed: "busy" until the first two timed
out, not executed. Now every answer waits for its ack without holding anything.
"""
from __future__ import annotations

import threading

import pytest

from procs import ROOT, NodeProcess

pytestmark = pytest.mark.slow  # starts ROS processes

HOLD = 3


def test_answers_waiting_for_acks_do_not_hold_serving_slots():
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor

    from tool_router.nodes.common import client_qos
    from tool_router.srv import RouteRequest

    acker = NodeProcess('slow_acker', env={'PYTHONPATH': f'{ROOT / "test"}:{ROOT}',
                                           'SLOW_ACKER_HOLD': str(HOLD)})
    router = NodeProcess('tool_router.nodes.router_node', '-p', 'chroma_ephemeral:=true',
                         '-p', 'serving.max_in_flight:=2', '-p', 'executor_ack_timeout_s:=30.0')
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        assert acker.wait_for('slow acker ready', 60), acker.output[-2000:]
        assert router.wait_for('serving /route_request', 180), router.output[-3000:]
        node = rclpy.create_node('test_router_acks', context=ctx)
        spinner = MultiThreadedExecutor(num_threads=2, context=ctx)
        spinner.add_node(node)
        threading.Thread(target=spinner.spin, daemon=True).start()
        clients = [node.create_client(RouteRequest, '/route_request', qos_profile=client_qos())
                   for _ in range(HOLD)]
        for client in clients:  # matched both ways: a probe was answered
            assert client.wait_for_service(timeout_sec=60)
            assert any(_answer(client, '', 5) is not None for _ in range(60))
        answers: list = [None] * HOLD

        def execute(i: int) -> None:
            while True:  # a client that gets "busy" may retry
                resp = _answer(clients[i], 'take off', 60)
                if resp is None or resp.success or 'busy' not in resp.message:
                    answers[i] = resp
                    return

        threads = [threading.Thread(target=execute, args=(i,)) for i in range(HOLD)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert acker.wait_for(f'acked {HOLD}', 30), acker.output[-2000:]
        assert all(a is not None for a in answers)
        assert [(a.success, a.executed) for a in answers] == [(True, True)] * HOLD, \
            [a.message for a in answers]
        assert len({a.request_id for a in answers}) == HOLD
    finally:
        rclpy.try_shutdown(context=ctx)
        assert router.stop() == 0, router.output[-2000:]
        acker.stop()


def _answer(client, text: str, timeout_s: float):
    from tool_router.srv import RouteRequest

    future = client.call_async(RouteRequest.Request(text=text, execute=bool(text)))
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    return future.result() if done.wait(timeout_s) else None
