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

    from tool_router.ros.common import client_qos
    from tool_router.srv import RouteRequest

    acker = NodeProcess('slow_acker', env={'PYTHONPATH': f'{ROOT / "test"}:{ROOT}',
                                           'SLOW_ACKER_HOLD': str(HOLD)})
    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
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


def test_a_selection_waits_for_an_executor_whose_reader_has_not_matched_yet():
    """The fresh-clone failure of test_namespaces: the router published a volatile selection
    before its writer had matched the executor's reader (a third participant already saw the
    executor), so the selection was lost and the answer said no executor acknowledged it.
    Now it waits, within the ack timeout, for a matched reader: here the executor stand-in
    starts only after the router said (on /diagnostics) that a selection is waiting."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor

    from procs import wait_until
    from tool_router.ros.common import client_qos
    from tool_router.srv import RouteRequest

    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
                         '-p', 'executor_ack_timeout_s:=60.0', '-p', 'diagnostics_period_s:=0.2')
    acker = None
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        assert router.wait_for('serving /route_request', 180), router.output[-3000:]
        node = rclpy.create_node('test_router_waits', context=ctx)
        waiting: list[str] = []

        def on_diagnostics(msg: DiagnosticArray) -> None:
            for status in msg.status:
                values = {kv.key: kv.value for kv in status.values}
                if 'selections_waiting_for_executor' in values:
                    waiting.append(values['selections_waiting_for_executor'])

        node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
        spinner = MultiThreadedExecutor(num_threads=2, context=ctx)
        spinner.add_node(node)
        threading.Thread(target=spinner.spin, daemon=True).start()
        client = node.create_client(RouteRequest, '/route_request', qos_profile=client_qos())
        assert client.wait_for_service(timeout_sec=60)
        assert any(_answer(client, '', 5) is not None for _ in range(60))
        answer: list = []
        thread = threading.Thread(target=lambda: answer.append(_answer(client, 'take off', 90)))
        thread.start()
        assert wait_until(lambda: waiting and waiting[-1] == '1', 60), waiting[-5:]
        acker = NodeProcess('slow_acker', env={'PYTHONPATH': f'{ROOT / "test"}:{ROOT}',
                                               'SLOW_ACKER_HOLD': '1'})
        thread.join(120)
        assert answer and answer[0] is not None
        assert (answer[0].success, answer[0].executed) == (True, True), answer[0].message
        assert acker.wait_for(f'holding 1: {answer[0].request_id}', 10), acker.output[-2000:]
        assert wait_until(lambda: waiting[-1] == '0', 30)
    finally:
        rclpy.try_shutdown(context=ctx)
        assert router.stop() == 0, router.output[-2000:]
        if acker is not None:
            acker.stop()


def test_without_any_executor_the_answer_says_nothing_was_sent():
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor

    from tool_router.ros.common import client_qos
    from tool_router.srv import RouteRequest

    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
                         '-p', 'executor_ack_timeout_s:=1.0')
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        assert router.wait_for('serving /route_request', 180), router.output[-3000:]
        node = rclpy.create_node('test_router_unsent', context=ctx)
        spinner = MultiThreadedExecutor(num_threads=2, context=ctx)
        spinner.add_node(node)
        threading.Thread(target=spinner.spin, daemon=True).start()
        client = node.create_client(RouteRequest, '/route_request', qos_profile=client_qos())
        assert client.wait_for_service(timeout_sec=60)
        assert any(_answer(client, '', 5) is not None for _ in range(60))
        resp = _answer(client, 'land the drone', 60)
        assert resp is not None and not resp.success and not resp.executed
        assert 'no executor subscribed to the selection topic within 1 s' in resp.message
        assert 'land' in resp.tools
        assert router.wait_for(f'selection {resp.request_id} not sent', 30)
    finally:
        rclpy.try_shutdown(context=ctx)
        assert router.stop() == 0, router.output[-2000:]
