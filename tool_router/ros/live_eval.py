"""Evaluation against the live graph: record selections off DDS, route through a running node.

ROS glue for :mod:`tool_router.evaluation` (which stays free of rclpy): the
:class:`LiveBackend` of ``tool-router eval --live`` and the recorder of
``tool-router bag record-selections``; the bags they write are read by
:mod:`tool_router.evaluation.bag`.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from tool_router.common.explanation import Explanation
from tool_router.evaluation.bag import (REQUEST_TOPIC, REQUEST_TYPE, SELECTION_TOPIC,
                                        SELECTION_TYPE, BagEntry, request_message, typestore,
                                        write_bag)
from tool_router.evaluation.dataset import Example
from tool_router.evaluation.metrics import LLMFlags
from tool_router.evaluation.runner import Routed, warn_about
from tool_router.common.errors import ToolRouterError


class SelectionRecorder:
    """Collects serialized ``SelectedCapabilities`` (and optionally ``Request``) on an rclpy node.

    The caller spins the node; :meth:`entries` returns what arrived, stamped
    with the local receive time, ready for :func:`write_bag`.
    """

    def __init__(self, node: Any, selection_topic: str = SELECTION_TOPIC,
                 request_topic: str | None = None) -> None:
        from tool_router.msg import Request, SelectedCapabilities
        self.received: list[BagEntry] = []
        self._subs = [node.create_subscription(SelectedCapabilities, selection_topic,
                                               self._on(selection_topic, SELECTION_TYPE), 100,
                                               raw=True)]
        if request_topic:
            self._subs.append(node.create_subscription(Request, request_topic,
                                                       self._on(request_topic, REQUEST_TYPE), 100,
                                                       raw=True))

    def _on(self, topic: str, msgtype: str) -> Any:
        def callback(data: bytes) -> None:
            self.received.append(BagEntry(topic, msgtype, time.time_ns(), bytes(data)))
        return callback

    def selections(self) -> int:
        """Selections received so far."""
        return sum(1 for e in self.received if e.msgtype == SELECTION_TYPE)


def record_selections(out: str | Path, duration_s: float, storage: str = 'mcap',
                      selection_topic: str = SELECTION_TOPIC,
                      request_topic: str | None = REQUEST_TOPIC) -> int:
    """Record selections (and requests) from the ROS graph for ``duration_s``; return the count."""
    from tool_router.ros.session import RosSession
    with RosSession('tool_router_bag_recorder') as session:
        recorder = SelectionRecorder(session.node, selection_topic, request_topic)
        deadline = time.monotonic() + duration_s
        try:
            while time.monotonic() < deadline and session.ok():
                session.spin_once(min(0.1, max(0.0, deadline - time.monotonic())))
        except KeyboardInterrupt:
            pass
    write_bag(out, recorder.received, storage)
    return len(recorder.received)


class LiveBackend:
    """Routes through a running router node's /route_request; latency is the round trip.

    With ``record=True`` it also subscribes to the node's selections and keeps,
    for every call, a ``Request`` message carrying the annotation under the
    router's request id, so :meth:`write` produces a bag that scores by itself.
    """

    def __init__(self, client: Any, record: bool = False,
                 selection_topic: str = '/tool_router/decisions', timeout_s: float = 30.0) -> None:
        self.client = client
        self.timeout_s = timeout_s
        self.recorder = SelectionRecorder(client.node, selection_topic) if record else None
        self._store = typestore() if record else None
        self.expected_selections = 0
        if record:
            self._wait_for_publisher(selection_topic, timeout_s)

    def _wait_for_publisher(self, topic: str, timeout_s: float) -> None:
        """Route only once the node's selection publisher is matched, or selections are lost."""
        node = self.client.node
        deadline = time.monotonic() + timeout_s
        while node.count_publishers(topic) == 0:
            if time.monotonic() > deadline:
                raise ToolRouterError(f'no publisher on {topic} after {timeout_s:.0f} s',
                                      hint='is the router node active?')
            self.client.spin_once(0.1)
        settle = time.monotonic() + 1.0  # let the publisher discover this subscription too
        while time.monotonic() < settle:
            self.client.spin_once(0.1)

    def route(self, example: Example, policy: str) -> Routed:
        """Route through the live node's service, timing the round trip."""
        sent_ns = time.time_ns()
        start = time.perf_counter()
        resp = self.client.call(example.request, policy, 0, self.timeout_s)
        rtt = (time.perf_counter() - start) * 1000.0
        if not resp.success:
            return Routed(tools=[], latency_ms=rtt, error=resp.message or 'refused')
        if self.recorder is not None:
            msg = request_message(self._store, example, sent_ns, resp.policy,
                                  request_id=resp.request_id)
            self.recorder.received.append(BagEntry(REQUEST_TOPIC, REQUEST_TYPE, sent_ns, msg))
            self.expected_selections += bool(resp.tools)
        why = Explanation.read(resp.explanation_json, warn_about(example.id))
        return Routed(tools=list(resp.tools), scores=[float(c.score) for c in resp.choices],
                      dropped=list(resp.dropped), fragments=why.fragments, latency_ms=rtt,
                      llm=LLMFlags.from_facts(why.llm))

    def write(self, out: str | Path, storage: str = 'mcap', settle_s: float = 5.0) -> Path:
        """Wait for the outstanding selections, then write the recorded bag."""
        assert self.recorder is not None
        deadline = time.monotonic() + settle_s
        while (self.recorder.selections() < self.expected_selections
               and time.monotonic() < deadline):
            self.client.spin_once(0.1)
        missing = self.expected_selections - self.recorder.selections()
        if missing > 0:
            print(f'tool-router: warning: {missing} selection(s) not received in time',
                  file=sys.stderr)
        return write_bag(out, self.recorder.received, storage)
