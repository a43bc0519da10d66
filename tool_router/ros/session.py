"""The one short-lived ROS node helper: a node for one command, in a context of its own.

``tool-router call``/``confirm``/``watch``/``trace follow``, live evaluation and
``bag record-selections`` each need a node for seconds. :class:`RosSession` is
that node: its own rclpy context (so it never touches, nor is shut down by,
another context in the process), a unique name, a single-threaded executor to
spin it, and :meth:`close` that tears all three down. Long-running nodes use
:func:`tool_router.ros.common.spin` instead.

``events=True`` spins with rclpy's C++ ``EventsExecutor`` (``rclpy.experimental``,
shipped with the Jazzy wheels) where the installed rclpy has it: a
``/route_request`` call that the router refuses at once took 7.2 ms with the
Python ``SingleThreadedExecutor`` and 1.1 ms with it (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

_serial = itertools.count()


def unique_name(prefix: str) -> str:
    """``prefix`` plus pid, a per-process serial and the clock: no two live nodes share it."""
    return f'{prefix}_{os.getpid()}_{next(_serial)}_{int(time.time() * 1000) % 10_000_000}'


def make_executor(context: rclpy.Context, events: bool = False) -> Any:
    """A single-threaded executor for ``context``: the C++ events executor if asked and present."""
    if events:
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:  # an rclpy without it: the Python executor does the same, slower
            pass
        else:
            return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


class RosSession:
    """A node with its own context and executor; use as a context manager or call close()."""

    def __init__(self, prefix: str, events: bool = False) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        try:
            self.node = Node(unique_name(prefix), context=self.context)
            self.executor = make_executor(self.context, events)
            self.executor.add_node(self.node)
        except Exception:
            rclpy.try_shutdown(context=self.context)
            raise

    def ok(self) -> bool:
        """Whether the context is still up (false after Ctrl-C or close)."""
        return rclpy.ok(context=self.context)

    def spin_once(self, timeout_s: float) -> None:
        """Run at most one ready callback, waiting up to ``timeout_s`` for one."""
        self.executor.spin_once(timeout_sec=timeout_s)

    def spin_until(self, future: Any, timeout_s: float) -> bool:
        """Spin until ``future`` is done or ``timeout_s`` passed; whether it is done."""
        self.executor.spin_until_future_complete(future, timeout_sec=timeout_s)
        return bool(future.done())

    def close(self) -> None:
        """Detach the node, stop the executor, destroy the node, shut the context down.

        The node leaves the executor first, so the executor holds none of its entities
        when they are destroyed (once in about 100 closes of a ``RouteClient`` on the
        events executor, ``destroy_node`` spun instead of returning; not reproduced since,
        so this order is a precaution, not a proven fix).
        """
        self.executor.remove_node(self.node)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def __enter__(self) -> 'RosSession':
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
