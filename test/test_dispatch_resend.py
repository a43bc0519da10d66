"""A read whose answer was lost is sent again within its deadline; an actuator's call never is.

A fresh service client's first reply can be lost (the server's reply writer has not yet
matched the client's reader; docs/TESTING.md). The executor's dispatcher sends a read again
while no answer came. Here the loss is made on purpose with real DDS: the server holds the
first request it gets until the test ends, and answers every later one at once.
"""
from __future__ import annotations

import contextlib
import threading
import uuid

import pytest

pytestmark = pytest.mark.slow  # rclpy over real DDS


@contextlib.contextmanager
def _served(srv_type, spec_of, tools):
    """A real server of ``srv_type`` that holds the first request it gets until the end, and a
    RosDispatcher (reads: battery_status) bound to it; yields (dispatcher, binding, requests)."""
    import rclpy
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node

    from tool_router.executor.dispatch import parse_binding
    from tool_router.ros.executor_io import RosDispatcher

    ctx = Context()
    rclpy.init(context=ctx)
    name = f'resend_check_{uuid.uuid4().hex[:8]}'
    release = threading.Event()
    received: list = []

    def answer(request, response):
        received.append(request)
        if len(received) == 1:  # the first request's answer never comes in time
            release.wait(30)
        response.success = True
        response.message = f'answer {len(received)}'
        return response

    server = Node('resend_server', context=ctx)
    server.create_service(srv_type, name, answer, callback_group=ReentrantCallbackGroup())
    client_node = Node('resend_client', context=ctx)
    spinner = MultiThreadedExecutor(num_threads=4, context=ctx)
    spinner.add_node(server)
    spinner.add_node(client_node)
    threading.Thread(target=spinner.spin, daemon=True).start()
    binding = parse_binding(spec_of(name))
    dispatcher = RosDispatcher(client_node, {t: binding for t in tools}, b'k' * 32,
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


@pytest.fixture
def rig():
    from std_srvs.srv import Trigger

    with _served(Trigger, lambda name: f'trigger:/{name}', ('battery_status', 'land')) as r:
        yield r


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
    assert len(received) == 1  # one request reached the vehicle, never a second


def test_a_resent_signed_call_carries_a_new_nonce():
    """A ``call:`` read is signed again for each send: the guard refuses a nonce twice."""
    from tool_router.srv import ToolCall

    with _served(ToolCall, lambda name: f'call:/{name}', ('battery_status',)) as rig:
        dispatcher, binding, received = rig
        result = dispatcher.dispatch('battery_status', binding, 'r3', 'battery?', timeout_s=20.0)
        nonces = [r.nonce for r in received]
    assert result.ok, result.message
    assert len(nonces) >= 2 and len(set(nonces)) == len(nonces) and all(nonces)
