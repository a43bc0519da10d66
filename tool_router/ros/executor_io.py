"""The executor's ROS side of dispatch and confirmation: service clients and the announcer.

:class:`RosDispatcher` calls Trigger / SetBool / ToolCall services (``call_async`` with a
deadline; never two servers on one name) and publishes std_msgs/String, as the ``bindings``
say; :class:`RosConfirmer` announces confirmation requests and waits on the
:class:`~tool_router.executor.confirmations.ConfirmationBook`. Both are made by
:class:`~tool_router.ros.executor_node.ExecutorNode` when it is activated.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from typing import Any, Callable

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from tool_router.common import signing
from tool_router.executor.arguments import ArgumentError
from tool_router.executor.confirmations import ConfirmationBook
from tool_router.executor.dispatch import (Binding, BindingKind, DispatchResult, call_arguments,
                                           setbool_value)
from tool_router.executor.pipeline import ConfirmRequest
from tool_router.executor.story import confirm_hint
from tool_router.executor.traces import ConfirmationOutcome
from tool_router.msg import ConfirmationRequest
from tool_router.srv import ToolCall


class RosDispatcher:
    """Calls Trigger / SetBool / ToolCall services and publishes String messages (deadlines)."""

    def __init__(self, node: Node, bindings: dict[str, Binding], key: bytes,
                 resend: frozenset[str] = frozenset()) -> None:
        self._node = node
        self._key = key  # signs every ToolCall: the vehicle acts on the executor's calls only
        # tools whose call may be sent again while no answer came (reads: sending one twice
        # reads twice, it changes nothing); an actuator's call is sent once, ever
        self._resend = resend
        self._group = ReentrantCallbackGroup()
        self._clients: dict[tuple[str, str], Any] = {}
        self._publishers: dict[str, Any] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        for binding in bindings.values():
            key = (binding.kind.value, binding.name)
            if binding.kind is BindingKind.TOPIC and binding.name not in self._publishers:
                self._publishers[binding.name] = node.create_publisher(String, binding.name, 10)
            elif (
                binding.kind in SERVICE_TYPES
                and key not in self._clients
            ):
                srv = SERVICE_TYPES[binding.kind]
                self._clients[key] = node.create_client(
                    srv, binding.name, callback_group=self._group
                )
                self._locks[key] = threading.Lock()

    def close(self) -> None:
        """Destroy the clients and publishers (the node is deactivated)."""
        for client in self._clients.values():
            self._node.destroy_client(client)
        for publisher in self._publishers.values():
            self._node.destroy_publisher(publisher)
        self._clients.clear()
        self._publishers.clear()

    def dispatch(
        self, tool: str, binding: Binding, request_id: str, request_text: str, timeout_s: float
    ) -> DispatchResult:
        """Perform the bound call; never waits longer than ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        if binding.kind is BindingKind.TOPIC:
            payload = {'request_id': request_id, 'tool': tool, 'request_text': request_text}
            self._publishers[binding.name].publish(String(data=json.dumps(payload)))
            return DispatchResult(True, f'published on {binding.name}')
        request: Any = None
        if binding.kind is BindingKind.CALL:
            try:
                request = tool_call_request(tool, binding, request_id, request_text, self._key)
            except ArgumentError as exc:
                return DispatchResult(False, f'refused, nothing sent: {exc.what}'
                                      + (f' ({exc.hint})' if exc.hint else ''),
                                      'missing_argument')
        key = (binding.kind.value, binding.name)
        client = self._clients.get(key)
        if client is None:
            return DispatchResult(False, f'no client for {binding.spec}', 'internal_error')
        while not client.service_is_ready():
            if time.monotonic() >= deadline:
                return DispatchResult(
                    False,
                    f'service {binding.name} not available within {timeout_s:g} s',
                    'endpoint_unreachable',
                )
            time.sleep(0.005)
        name = self._node.resolve_service_name(client.srv_name)
        servers = self._node.count_services(name)
        if servers > 1:  # a second process answers on the vehicle's name: whose answer is it?
            return DispatchResult(
                False, f'{servers} servers offer {name}: not called (another process '
                'answers on the vehicle\'s service; docs/SECURITY.md, "A second server")',
                'endpoint_ambiguous')
        if binding.kind is BindingKind.SETBOOL:
            request = SetBool.Request(data=setbool_value(binding, request_text))
        elif binding.kind is BindingKind.TRIGGER:
            request = Trigger.Request()
        # a resent call is signed again (a new nonce: the vehicle's guard refuses a replay)
        again: Callable[[], Any] = (
            functools.partial(tool_call_request, tool, binding, request_id, request_text,
                              self._key)
            if binding.kind is BindingKind.CALL else lambda: request)
        response, sends = self._call(tool, key, client, request, again, deadline)
        if response is _NO_ANSWER:
            return DispatchResult(
                False, f'no answer from {binding.name} within {timeout_s:g} s'
                + (f' ({sends} sends)' if sends > 1 else ''), 'call_timeout'
            )
        if response is None:
            return DispatchResult(False, f'call to {binding.name} failed', 'call_failed')
        failed = getattr(response, 'failure_mode', '') or 'call_failed'  # ToolCall says why
        return DispatchResult(
            bool(response.success), response.message, '' if response.success else failed
        )


    def _call(self, tool: str, key: tuple[str, str], client: Any, request: Any,
              again: Callable[[], Any], deadline: float) -> tuple[Any, int]:
        """The first answer before ``deadline`` (or ``_NO_ANSWER``) and how many sends it took.

        A read is sent again (``again()``: the request to resend) after :data:`RESEND_AFTER_S`,
        then after twice as long, and so on, while no answer came: a fresh client's first reply
        is lost when the server's reply writer has not yet matched the client's reader
        (docs/TESTING.md). Every other call is sent once.
        """
        answered = threading.Event()
        futures: list[Any] = []

        def send(req: Any) -> None:
            with self._locks[key]:
                future = client.call_async(req)
            future.add_done_callback(lambda _: answered.set())
            futures.append(future)

        send(request)
        wait_s = RESEND_AFTER_S
        while not answered.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if tool not in self._resend:
                answered.wait(left)
            elif not answered.wait(min(left, wait_s)) and time.monotonic() < deadline:
                wait_s *= 2
                send(again())
        done = [f for f in futures if f.done() and f.result() is not None]
        for future in futures:
            if not future.done():
                future.cancel()
                client.remove_pending_request(future)
        if done:
            return done[0].result(), len(futures)
        if any(f.done() for f in futures):
            return None, len(futures)  # answered, but the call failed
        return _NO_ANSWER, len(futures)


RESEND_AFTER_S = 0.5
"""A read with no answer after this long is sent again (then after 1 s, 2 s, ...)."""
_NO_ANSWER = object()

SERVICE_TYPES: dict[BindingKind, Any] = {BindingKind.TRIGGER: Trigger,
                                         BindingKind.SETBOOL: SetBool,
                                         BindingKind.CALL: ToolCall}


def tool_call_request(tool: str, binding: Binding, request_id: str, request_text: str,
                      key: bytes) -> Any:
    """The signed ToolCall request of a ``call:`` binding (ArgumentError: a value missing)."""
    values = call_arguments(tool, binding, request_text)
    signed = signing.sign_call(key, tool, request_id, values)
    return ToolCall.Request(tool=tool, request_id=request_id, given=sorted(values),
                            timestamp=signed.timestamp, nonce=signed.nonce,
                            signature=signed.signature, **values)


class RosConfirmer:
    """Announces confirmation requests on a topic and waits on the ConfirmationBook."""

    def __init__(self, node: Node, book: ConfirmationBook, publisher: Any) -> None:
        self._node = node
        self._book = book
        self._pub = publisher

    def confirm(self, requests: list[ConfirmRequest]) -> dict[str, ConfirmationOutcome]:
        """Open, announce, then wait for every request until one shared deadline."""
        entries = [(r, self._book.open(r.request_id, r.tool, r.risk, r.timeout_s))
                   for r in requests]
        deadline = time.monotonic() + max(r.timeout_s for r in requests)
        for r, _ in entries:
            self._pub.publish(
                ConfirmationRequest(
                    stamp=self._node.get_clock().now().to_msg(),
                    request_id=r.request_id,
                    tool=r.tool,
                    risk=r.risk,
                    request_text=r.request_text,
                    timeout_s=float(r.timeout_s),
                )
            )
            hint = confirm_hint(r.request_id, r.tool, self._node.get_namespace())
            self._node.get_logger().info(
                f'waiting {r.timeout_s:g} s for confirmation of {r.tool} (request {r.request_id})'
                f': {hint} (or --deny)'
            )
        return {r.tool: self._book.wait(entry, deadline) for r, entry in entries}
