"""ROS binding for the command line: call /executor/confirm, follow /executor/traces.

The only module of :mod:`tool_router.executor` that talks ROS, through short-lived
:class:`~tool_router.ros.session.RosSession` nodes.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from tool_router.common.errors import ToolRouterError
from tool_router.ros.session import RosSession


def call_confirm(request_id: str, tool: str, approve: bool, operator_name: str,
                 service: str = '/executor/confirm', timeout_s: float = 10.0,
                 signed: Any = None) -> Any:
    """Call the ConfirmTool service once; raise ToolRouterError when it does not answer.

    ``signed`` is an :class:`~tool_router.executor.signing.SignedConfirmation` (None = unsigned).
    """
    from tool_router.srv import ConfirmTool

    request = ConfirmTool.Request(request_id=request_id, tool=tool, approve=approve,
                                  operator_name=operator_name)
    if signed is not None:
        request.key_id, request.timestamp = signed.key_id, signed.timestamp
        request.nonce, request.signature = signed.nonce, signed.signature
    return call_service(ConfirmTool, service, request, timeout_s, 'tool_router_confirm')


def call_service(srv_type: Any, service: str, request: Any, timeout_s: float = 10.0,
                 prefix: str = 'tool_router_cli') -> Any:
    """Call one service once and return its response; ToolRouterError when nobody answers."""
    session = RosSession(prefix)
    try:
        client = session.node.create_client(srv_type, service)
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise ToolRouterError(f'service {service} not available after {timeout_s:g} s',
                                  hint='is the executor running? `tool-router serve`')
        future = client.call_async(request)
        if not session.spin_until(future, timeout_s):
            future.cancel()
            raise ToolRouterError(f'no answer from {service} within {timeout_s:g} s')
        return future.result()
    finally:
        session.close()


def pending_confirmations(topic: str = '/executor/pending_confirmations',
                          timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """The executor's waiting confirmations (a transient-local topic: read once).

    Each item: request_id, tool, risk, waiting_s and remaining_s, computed now from when the
    wait began (the list is latched: its own ``remaining_s`` is as of its publication).
    """
    from tool_router.msg import PendingConfirmations
    from tool_router.ros.common import latched

    session = RosSession('tool_router_confirm_list')
    box: list[Any] = []
    session.node.create_subscription(PendingConfirmations, topic, box.append, latched(1))
    deadline = time.monotonic() + timeout_s
    try:
        while not box and time.monotonic() < deadline:
            session.spin_once(0.1)
    finally:
        session.close()
    if not box:
        raise ToolRouterError(f'nothing on {topic} within {timeout_s:g} s',
                              hint='is the executor running? `tool-router serve`')
    now = time.time()
    return [{'request_id': p.request_id, 'tool': p.tool, 'risk': p.risk,
             'waiting_s': max(0.0, now - p.opened),
             'remaining_s': max(0.0, p.opened + p.timeout_s - now)} for p in box[-1].pending]


def follow_traces(on_record: Callable[[Any], None], topic: str = '/executor/traces',
                  count: int = 0, timeout_s: float = 0.0) -> int:
    """Call ``on_record`` per ExecutionTrace; stop after ``count`` or ``timeout_s`` (0 = never)."""
    from tool_router.msg import ExecutionTrace

    session = RosSession('tool_router_trace_tail')
    received = [0]

    def callback(msg: Any) -> None:
        received[0] += 1
        on_record(msg)

    session.node.create_subscription(ExecutionTrace, topic, callback, 50)
    deadline = time.monotonic() + timeout_s if timeout_s > 0 else None
    try:
        while session.ok():
            if count and received[0] >= count:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
            session.spin_once(0.2)
    finally:
        session.close()
    return received[0]
