"""Answers on the request topic: one answer topic per client (the default-QoS clients' path).

A ``/route_request`` client's reply reader receives *every* client's answers and skips the
ones that are not its own (Fast DDS); with rclpy's default reply history (KEEP_LAST 10) a
burst of others' answers overwrites its own, and nothing on the server can change the
client's QoS (docs/PERFORMANCE.md, "Default-QoS clients"). On this path a client names
itself in ``Request.client_id`` and subscribes to ``tool_router/answers/<client_id>``; the
router answers there, so the client's reader holds only its own answers and the default
depth of 10 is enough for up to 10 requests in flight per client.

A client's publisher is made on its first request; the first answer waits (up to
:data:`ANSWER_MATCH_S`) until the client's reader has matched, since a sample published
before matching goes nowhere. At most :data:`MAX_CLIENTS` publishers are kept (the least
recently used one is dropped; that client's next answer makes it again).
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from typing import Any

from rclpy.node import Node

from tool_router.msg import RouteAnswer

ANSWER_PREFIX = 'tool_router/answers'
ANSWER_MATCH_S = 2.0
MAX_CLIENTS = 256
CLIENT_ID = re.compile(r'[A-Za-z][A-Za-z0-9_]{0,63}')


def client_id_problem(client_id: str) -> str:
    """Why ``client_id`` cannot name an answer topic ('' = it can)."""
    if CLIENT_ID.fullmatch(client_id):
        return ''
    return (f'client_id {client_id[:80]!r} is not a name: letters, digits and _, starting '
            'with a letter, at most 64')


class Answers:
    """The per-client answer publishers of one router node (thread-safe)."""

    def __init__(self, node: Node, prefix: str = ANSWER_PREFIX, max_clients: int = MAX_CLIENTS,
                 match_s: float = ANSWER_MATCH_S) -> None:
        self._node = node
        self._prefix = prefix
        self._max = max_clients
        self._match_s = match_s
        self._lock = threading.Lock()
        self._publishers: OrderedDict[str, Any] = OrderedDict()
        self.counters = {'answers': 0, 'answers_unmatched': 0, 'answer_clients_dropped': 0}

    def topic(self, client_id: str) -> str:
        """The answer topic of a client (relative: under the router's namespace)."""
        return f'{self._prefix}/{client_id}'

    def publish(self, client_id: str, answer: RouteAnswer) -> bool:
        """Publish a client's answer; False when no reader of it matched within the wait."""
        with self._lock:
            publisher = self._publishers.get(client_id)
            if publisher is None:
                publisher = self._node.create_publisher(RouteAnswer, self.topic(client_id), 10)
                self._publishers[client_id] = publisher
                while len(self._publishers) > self._max:
                    _, oldest = self._publishers.popitem(last=False)
                    self._node.destroy_publisher(oldest)
                    self.counters['answer_clients_dropped'] += 1
            self._publishers.move_to_end(client_id)
        deadline = time.monotonic() + self._match_s
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        matched = publisher.get_subscription_count() > 0
        try:
            publisher.publish(answer)
        except Exception:  # noqa: BLE001 - dropped by a newer client meanwhile, or shut down
            matched = False
        with self._lock:
            self.counters['answers' if matched else 'answers_unmatched'] += 1
        return matched

    def close(self) -> None:
        """Destroy every answer publisher."""
        with self._lock:
            for publisher in self._publishers.values():
                self._node.destroy_publisher(publisher)
            self._publishers.clear()
