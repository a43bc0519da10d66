"""A real rclpy client of /route_request (used by ``tool-router call`` and live evaluation)."""

from __future__ import annotations

import time
from typing import Any

from tool_router.common.errors import ToolRouterError
from tool_router.ros.common import client_qos
from tool_router.ros.session import RosSession
from tool_router.srv import RouteRequest

PROBE_TIMEOUT_S = 1.0  # per empty probe request while the reply path is discovered


class RouteClient:
    """Owns a short-lived node (:class:`RosSession`) and a client; call :meth:`close`."""

    def __init__(self, service: str = '/route_request', wait_s: float = 30.0) -> None:
        # the C++ events executor: the Python one cost about 6 ms of every call's round trip
        self.session = RosSession('tool_router_client', events=True)
        self.node = self.session.node
        self.client = self.node.create_client(RouteRequest, service, qos_profile=client_qos())
        deadline = time.monotonic() + wait_s
        if not self.client.wait_for_service(timeout_sec=wait_s) or not self._probe(deadline):
            self.close()
            raise ToolRouterError(
                f'service {service} not available after {wait_s:.0f} s',
                hint='start the router with `tool-router serve`'
                     + ('' if service.count('/') > 1 else
                        ", or give the vehicle's --namespace"),
            )

    def _probe(self, deadline: float) -> bool:
        """Send empty requests until one is answered: the server can then reach us.

        ``wait_for_service`` only says that *this* side has matched the server. Until
        the server's reply writer has matched our reader, a reply is sent to nobody and
        the call is never answered (the first call of a fresh client got lost under
        load). An empty request is refused at once and changes nothing.
        """
        while time.monotonic() < deadline:
            future = self.client.call_async(RouteRequest.Request(text=''))
            wait = min(PROBE_TIMEOUT_S, max(0.01, deadline - time.monotonic()))
            if self.session.spin_until(future, wait):
                return True
            future.cancel()
            self.client.remove_pending_request(future)
        return False

    def call(
        self,
        text: str,
        policy: str = '',
        max_tools: int = 0,
        timeout_s: float = 30.0,
        execute: bool = False,
        request_id: str = '',
        signature: Any = None,
    ) -> Any:
        """Route ``text``; only with ``execute`` does the executor act on the selection.

        ``signature`` (a :class:`~tool_router.common.signing.RequesterSignature` over
        ``request_id`` and ``text``) travels untouched to the executor, which checks it.
        """
        req = RouteRequest.Request(
            text=text, policy=policy, max_tools=max(0, int(max_tools)), execute=execute,
            request_id=request_id,
        )
        if signature is not None:
            req.key_id, req.timestamp = signature.key_id, float(signature.timestamp)
            req.nonce, req.signature = signature.nonce, signature.signature
        future = self.client.call_async(req)
        if not self.session.spin_until(future, timeout_s):
            future.cancel()
            raise ToolRouterError(f'no answer from /route_request within {timeout_s:.0f} s')
        return future.result()

    def spin_once(self, timeout_s: float) -> None:
        """Let the node's other subscriptions (a recorder's) take one message."""
        self.session.spin_once(timeout_s)

    def close(self) -> None:
        """Destroy the node and its context."""
        self.session.close()

    def __enter__(self) -> 'RouteClient':
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def call_route(
    text: str,
    policy: str = '',
    max_tools: int = 0,
    timeout_s: float = 30.0,
    execute: bool = False,
    service: str = '/route_request',
    request_id: str = '',
    signature: Any = None,
) -> Any:
    """One /route_request call with a short-lived client node (route only unless execute)."""
    with RouteClient(service=service, wait_s=timeout_s) as client:
        return client.call(text, policy, max_tools, timeout_s, execute, request_id, signature)
