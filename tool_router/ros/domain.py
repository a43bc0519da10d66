"""A ROS domain of one's own for a test run or a benchmark on a shared machine.

``1 + pid % 100`` collides as soon as two runs' process ids agree modulo 100,
and two runs on one domain see each other's nodes (a selection answered by the
other run's executor, a watch fired twice). :func:`claim_domain` takes the first
domain id whose lock file (``$TMPDIR/tool_router_ros_domains/<id>.lock``) it can
``flock``; the lock is released by the kernel when the last process holding the
file closes it, even after SIGKILL, so a crashed run leaves nothing stale. Pass
:func:`held_fds` to child processes (``pass_fds``) and the domain stays taken for as
long as any of them lives, so an orphan of an interrupted run is never joined by
the next run.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

FIRST, LAST = 1, 101  # 0 is everyone's default; above 101 DDS ports meet Linux's ephemeral range
ENV = 'ROS_DOMAIN_ID'

_held: dict[int, int] = {}  # domain id -> the open, locked file descriptor


def lock_dir() -> Path:
    """Where the lock files live (one per domain id)."""
    return Path(tempfile.gettempdir()) / 'tool_router_ros_domains'


def claim_domain() -> int:
    """Lock a free domain id for this process (and the children given :func:`held_fds`)."""
    folder = lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    span = LAST - FIRST + 1
    offset = os.getpid() % span  # spread concurrent runs, then probe upwards
    for i in range(span):
        domain = FIRST + (offset + i) % span
        if domain in _held:
            continue
        fd = os.open(folder / f'{domain}.lock', os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, f'{os.getpid()}\n'.encode())  # who holds it, for a curious reader
        _held[domain] = fd
        return domain
    raise RuntimeError(f'every ROS domain id {FIRST}..{LAST} is locked under {folder}')


def release(domain: int | None = None) -> None:
    """Close the lock of ``domain`` (every domain this process holds when None) and forget it.

    A released domain is no longer "claimed by this process": :func:`private_domains` then
    reads an explicit ``ROS_DOMAIN_ID`` equal to it as given, and :func:`claim_domain` may
    take it again. Closing the descriptor drops the lock once no child holds a copy.
    """
    for held in ([domain] if domain is not None else list(_held)):
        fd = _held.pop(held, None)
        if fd is not None:
            os.close(fd)


def held_fds() -> tuple[int, ...]:
    """The lock file descriptors this process holds: give them to children (``pass_fds``)."""
    return tuple(_held.values())


def private_domains(n: int) -> list[int]:
    """:func:`private_domain`, then ``n - 1`` more claimed domains (all: the same explicit one).

    A test run gives each test module the next domain of the pool, so a module never meets
    the graph left by the module before it: a participant of a node the previous module
    stopped (or killed) lingers in the others' discovery until its lease runs out, and a
    service whose old request reader outlives its response writer reads as unavailable.
    """
    first = private_domain()
    if first not in _held:  # given in the environment, not claimed by this process
        return [first]
    return [first] + [claim_domain() for _ in range(n - 1)]


def private_domain() -> int:
    """Use a claimed domain (unless ``ROS_DOMAIN_ID`` is already set) with loopback discovery.

    Sets ``ROS_DOMAIN_ID`` and ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` in this
    process's environment, which child processes inherit; returns the domain id.
    """
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    if os.environ.get(ENV, '').strip():
        return int(os.environ[ENV])
    domain = claim_domain()
    os.environ[ENV] = str(domain)
    return domain
