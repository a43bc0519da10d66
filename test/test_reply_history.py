"""A /route_request client keeps its own answer through a burst of answers to other clients.

Fast DDS hands every answer of a service to every client's reply reader; a client
whose process is busy for a moment finds its answer behind the others'. With the
default reply history (KEEP_LAST 10) its answer was overwritten: the lost answers
of the load benchmark (issue 13). Here the burst is made on purpose: the victim
client does not read while 30 other clients are answered; then it reads. Real DDS,
no timing: every step waits for the event it needs.
"""
from __future__ import annotations

import threading
import uuid

import pytest
from procs import wait_until

pytestmark = pytest.mark.slow  # rclpy over real DDS

SERVICE = 'reply_history_check'  # + a suffix per run: the runs never share a service
OTHERS = 30


def _answered(node, client, text: str, executor=None, timeout_s: float = 5.0) -> bool:
    import rclpy

    from tool_router.srv import RouteRequest

    future = client.call_async(RouteRequest.Request(text=text))
    if executor is None:  # the node is spun elsewhere
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        return done.wait(timeout_s)
    rclpy.spin_until_future_complete(node, future, executor=executor, timeout_sec=timeout_s)
    return future.done()


def _victim_keeps_its_answer(qos) -> bool:
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    from rclpy.node import Node

    from tool_router.ros.common import client_qos, service_qos
    from tool_router.srv import RouteRequest

    ctx = Context()
    rclpy.init(context=ctx)
    served: list[str] = []
    service = f'{SERVICE}_{uuid.uuid4().hex[:8]}'
    nodes: list[Node] = []
    spinner = None

    def answer(request, response):
        served.append(request.text)
        response.success = False
        response.message = 'busy'  # answered at once, as an overloaded router does
        return response

    try:
        server = Node('reply_history_server', context=ctx)
        server.create_service(RouteRequest, service, answer, qos_profile=service_qos(1000))
        others_node = Node('reply_history_others', context=ctx)
        victim_node = Node('reply_history_victim', context=ctx)
        nodes += [server, others_node, victim_node]
        spinner = MultiThreadedExecutor(num_threads=2, context=ctx)
        spinner.add_node(server)
        spinner.add_node(others_node)
        threading.Thread(target=spinner.spin, daemon=True).start()
        own = SingleThreadedExecutor(context=ctx)
        own.add_node(victim_node)

        victim = victim_node.create_client(RouteRequest, service, qos_profile=qos)
        others = [others_node.create_client(RouteRequest, service, qos_profile=client_qos())
                  for _ in range(OTHERS)]
        # Every client is matched both ways (its probe was answered) before the burst.
        assert victim.wait_for_service(timeout_sec=30)
        assert any(_answered(victim_node, victim, 'probe', own) for _ in range(60))
        for client in others:
            assert client.wait_for_service(timeout_sec=30)
            assert any(_answered(others_node, client, 'probe') for _ in range(60))

        mine = victim.call_async(RouteRequest.Request(text='victim'))  # not read yet
        assert wait_until(lambda: 'victim' in list(served), 30)  # answered, not yet read
        # The burst: every other client asks once and gets its answer.
        results = [None] * OTHERS

        def ask(i: int) -> None:
            results[i] = _answered(others_node, others[i], f'other {i}', timeout_s=30)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(OTHERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(results)
        # Now the victim reads.
        rclpy.spin_until_future_complete(victim_node, mine, executor=own, timeout_sec=10)
        return mine.done()
    finally:
        if spinner is not None:
            spinner.shutdown(timeout_sec=10)
        for node in nodes:  # gone from the graph now, not when the garbage collector runs
            node.destroy_node()
        rclpy.try_shutdown(context=ctx)


def test_client_reply_history_survives_a_burst():
    from tool_router.ros.common import client_qos, service_qos

    assert _victim_keeps_its_answer(client_qos())
    # The default history (KEEP_LAST 10, as rclpy's default for services) loses it: the
    # burst above is the failure the deeper history prevents.
    assert not _victim_keeps_its_answer(service_qos(10))
