"""Admission control for the router service: bounded concurrency, busy answers, LLM slots.

Pure logic (no rclpy): the node asks :meth:`Admission.enter` before routing and
calls :meth:`Admission.leave` after. A request beyond ``max_in_flight`` is not
queued without bound: it is answered at once with ``success=false`` and
``message="busy"`` and counted. LLM-backed policies hold one of ``llm_slots``
slots while they run; the executor has more threads than LLM slots, so local
requests always find a thread and never wait behind an LLM call.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

LLM_POLICIES = frozenset({'llm', 'hybrid'})
BUSY = 'busy'


class ServingParams(BaseModel):
    """Concurrency of the router node's /route_request service (docs/PERFORMANCE.md)."""

    model_config = ConfigDict(extra='forbid')
    threads: int = Field(
        16, ge=2, le=256, description='Executor threads serving requests concurrently.'
    )
    max_in_flight: int = Field(
        12, ge=1, le=10_000,
        description='Requests routed at once; more are answered success=false "busy".',
    )
    llm_slots: int = Field(
        4, ge=0, le=256,
        description='Concurrent llm/hybrid requests (kept below threads so local ones run).',
    )
    batch_wait_ms: float = Field(
        2.0, ge=0, le=50,
        description='Longest wait to batch texts of concurrent requests into one forward pass.',
    )
    batch_max: int = Field(64, ge=1, le=1024, description='Most texts in one forward pass.')
    lanes: int = Field(
        2, ge=1, le=64,
        description='Forward passes run at once (onnx backends; each on encoder.threads '
        'threads); measured: docs/PERFORMANCE.md.',
    )
    queue_depth: int = Field(
        1000, ge=10, le=100_000,
        description='DDS history depth of the service (requests waiting for a thread).',
    )
    ack_waits: int = Field(
        64, ge=1, le=4096,
        description='execute=true answers waiting for the executor\'s ack at once, each on an '
        'executor thread of its own beside `threads` (more are answered "busy").',
    )
    nice: int = Field(
        0, ge=-20, le=19,
        description='Scheduling priority of the router process as it starts (0 = leave it as '
        'started; below 0 = ahead of other processes, needs CAP_SYS_NICE or root).',
    )


def set_priority(nice: int) -> str:
    """Give every thread of this process the nice value ``nice``; '' or a warning.

    Linux keeps a nice value per thread (and a new thread inherits its creator's), so
    every thread that exists now is set: DDS and executor threads as well as the caller.
    A value the process may not set (below its current one without CAP_SYS_NICE) changes
    nothing and returns a warning saying so; it never raises.
    """
    task = Path('/proc/self/task')
    tids = sorted(int(t) for t in os.listdir(task)) if task.is_dir() else [0]
    before = os.getpriority(os.PRIO_PROCESS, 0)
    done = []
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
            done.append(tid)
        except ProcessLookupError:  # the thread ended meanwhile
            continue
        except PermissionError:
            for undo in done:  # all threads or none
                try:
                    os.setpriority(os.PRIO_PROCESS, undo, before)
                except OSError:
                    pass
            return (
                f'serving.nice {nice}: not permitted, the process keeps nice {before} '
                '(a lower value needs root or CAP_SYS_NICE: e.g. systemd Nice=, setcap '
                'cap_sys_nice, or an RLIMIT_NICE)'
            )
    return ''


def apply_priority(nice: int) -> str:
    """:func:`set_priority` for ``serving.nice``: 0 leaves the process as it was started."""
    return set_priority(nice) if nice else ''


@dataclass
class Ticket:
    """The answer of :meth:`Admission.enter`: admitted or not, and whether it holds an LLM slot."""

    admitted: bool
    llm: bool = False
    reason: str = ''


class Admission:
    """Counts requests in flight and decides admit / busy; thread-safe."""

    def __init__(self, params: ServingParams | None = None) -> None:
        self.params = params or ServingParams()
        self._lock = threading.Lock()
        self.in_flight = 0
        self.llm_in_flight = 0
        self.busy = 0
        self.busy_llm = 0

    def enter(self, policy: str) -> Ticket:
        """Admit a request for ``policy`` or refuse it as busy (counted)."""
        llm = policy in LLM_POLICIES
        p = self.params
        with self._lock:
            if self.in_flight >= p.max_in_flight:
                self.busy += 1
                return Ticket(False, llm, BUSY)
            if llm:
                if self.llm_in_flight >= min(p.llm_slots, p.threads - 1):
                    self.busy += 1
                    self.busy_llm += 1
                    return Ticket(False, llm, BUSY)
                self.llm_in_flight += 1
            self.in_flight += 1
            return Ticket(True, llm)

    def leave(self, ticket: Ticket) -> None:
        """Release what an admitted request held."""
        if not ticket.admitted:
            return
        with self._lock:
            self.in_flight -= 1
            if ticket.llm:
                self.llm_in_flight -= 1

    def counters(self) -> dict[str, int]:
        """In-flight and busy counts, for /diagnostics."""
        with self._lock:
            return {
                'in_flight': self.in_flight,
                'llm_in_flight': self.llm_in_flight,
                'busy': self.busy,
                'busy_llm': self.busy_llm,
            }
