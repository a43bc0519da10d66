"""A read whose answer was lost is sent again within its deadline; an actuator's call never is.

A fresh service client's first reply can be lost (the server's reply writer has not yet
matched the client's reader; docs/TESTING.md). The executor's dispatcher sends a read again
while no answer came. Here the loss is made on purpose with real DDS: the server holds the
first request it gets until the test ends, and answers every later one at once.
"""
from __future__ import annotations

import threading
import uuid

import pytest

pytestmark = pytest.mark.slow  # rclpy over real DDS


@pytest.fixture
def rig():
    import rclpy
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node
    from std_srvs.srv import Trigger

    from tool_router.executor.dispatch import parse_binding
    from tool_router.ros.executor_io import RosDispatcher

    ctx = Context()
    rclpy.init(context=ctx)
    name = f'resend_check_{uuid.uuid4().hex[:8]}'
    release = threading.Event()
    received: list[int] = []

    def answer(request, response):
        received.append(len(received))
        if len(received) == 1:  # the first request's answer never comes in time
            release.wait(30)
        response.success = True
        response.message = f'answer {len(received)}'
        return response

    server = Node('resend_server', context=ctx)
    server.create_service(Trigger, name, answer, callback_group=ReentrantCallbackGroup())
    client_node = Node('resend_client', context=ctx)
    spinner = MultiThreadedExecutor(num_threads=4, context=ctx)
    spinner.add_node(server)
    spinner.add_node(client_node)
    threading.Thread(target=spinner.spin, daemon=True).start()
    binding = parse_binding(f'trigger:/{name}')
    bindings = {'battery_status': binding, 'land': binding}
    dispatcher = RosDispatcher(client_node, bindings, b'k' * 32,
                               resend=frozenset({'battery_status'}))
    try:
        yield dispatcher, binding, received
    finally:
        release.set()
        dispatcher.close()
        spinner.shutdown()
        server.destroy_node()
        client_node.destroy_node()
        rclpy.shutdown(context=ctx)


def test_a_read_with_a_lost_answer_is_sent_again_and_answered(rig):
    dispatcher, binding, received = rig
    result = dispatcher.dispatch('battery_status', binding, 'r1', 'battery?', timeout_s=20.0)
    assert result.ok, result.message
    # a resent request's answer (the first request is still held by the server)
    assert result.message.startswith('answer ') and result.message != 'answer 1'
    assert len(received) >= 2


def test_an_actuator_call_is_sent_once_even_with_no_answer(rig):
    dispatcher, binding, received = rig
    result = dispatcher.dispatch('land', binding, 'r2', 'land', timeout_s=2.0)
    assert not result.ok
    assert result.failure_mode == 'call_timeout'
    assert 'sends' not in result.message
    assert received == [0]  # one request reached the vehicle, never a second


def test_a_resent_signed_call_carries_a_new_nonce():
    """A ``call:`` read is signed again for each send: the guard refuses a nonce twice."""
    import rclpy
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node

    from tool_router.executor.dispatch import parse_binding
    from tool_router.ros.executor_io import RosDispatcher
    from tool_router.srv import ToolCall

    ctx = Context()
    rclpy.init(context=ctx)
    name = f'resend_call_{uuid.uuid4().hex[:8]}'
    release = threading.Event()
    nonces: list[str] = []

    def answer(request, response):
        nonces.append(request.nonce)
        if len(nonces) == 1:
            release.wait(30)
        response.success = True
        response.message = f'answer {len(nonces)}'
        return response

    server = Node('resend_call_server', context=ctx)
    server.create_service(ToolCall, name, answer, callback_group=ReentrantCallbackGroup())
    client_node = Node('resend_call_client', context=ctx)
    spinner = MultiThreadedExecutor(num_threads=4, context=ctx)
    spinner.add_node(server)
    spinner.add_node(client_node)
    threading.Thread(target=spinner.spin, daemon=True).start()
    binding = parse_binding(f'call:/{name}')
    dispatcher = RosDispatcher(client_node, {'battery_status': binding}, b'k' * 32,
                               resend=frozenset({'battery_status'}))
    try:
        result = dispatcher.dispatch('battery_status', binding, 'r3', 'battery?', timeout_s=20.0)
    finally:
        release.set()
        dispatcher.close()
        spinner.shutdown()
        server.destroy_node()
        client_node.destroy_node()
        rclpy.shutdown(context=ctx)
    assert result.ok, result.message
    assert len(nonces) >= 2 and len(set(nonces)) == len(nonces) and all(nonces)
