"""Start the package's nodes as real processes for integration tests.

Every :class:`NodeProcess` runs in a process group of its own and is recorded
here until stopped; :func:`stop_all` kills the groups still alive. It runs at
the end of the session (``pytest_unconfigure`` in conftest), at interpreter exit
(``atexit``) and, through :func:`install_interrupt_handlers`, when pytest is
interrupted by SIGTERM or SIGHUP. When pytest dies without running any of them
(SIGKILL), each child started from the main thread gets SIGTERM from the kernel
(``PR_SET_PDEATHSIG``). Children keep the run's ROS domain lock
(:mod:`tool_router.ros.domain`), so no later run joins the domain of an orphan.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from tool_router.ros.domain import held_fds

ROOT = Path(__file__).resolve().parent.parent
PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: no dlopen after fork
_live: dict[int, 'NodeProcess'] = {}  # pid -> process not yet stopped
_live_lock = threading.Lock()


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent (pytest) dies."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the process group led by ``pid`` (gone already: nothing to do)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_all() -> None:
    """Kill the process group of every node process still recorded (idempotent)."""
    with _live_lock:
        procs = list(_live.values())
        _live.clear()
    for proc in procs:
        kill_group(proc.proc.pid)
        try:
            proc.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def install_interrupt_handlers() -> None:
    """SIGTERM/SIGHUP end the run like Ctrl-C, so the fixtures' finalisers and atexit run."""
    def interrupt(signum: int, frame: Any) -> None:
        stop_all()
        raise KeyboardInterrupt(f'signal {signum}')

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, interrupt)


atexit.register(stop_all)


class NodeProcess:
    """A node running as a child process, its output collected line by line."""

    def __init__(self, module: str, *ros_args: str, env: dict[str, str] | None = None) -> None:
        cmd = [sys.executable, '-u', '-m', module]
        if ros_args:
            cmd += ['--ros-args', *ros_args]
        full_env = {
            **os.environ,
            'PYTHONPATH': f'{ROOT}{os.pathsep}{os.environ.get("PYTHONPATH", "")}',
            'PYTHONUNBUFFERED': '1',
            **(env or {}),
        }
        main = threading.current_thread() is threading.main_thread()
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=full_env,
            cwd=ROOT,
            start_new_session=True,
            pass_fds=held_fds(),
            # PDEATHSIG follows the creating thread: only the main thread lives as long as pytest
            preexec_fn=_die_with_parent if main else None,
        )
        with _live_lock:
            _live[self.proc.pid] = self
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip('\n'))

    @property
    def output(self) -> str:
        return '\n'.join(self.lines)

    def wait_for(self, text: str, timeout_s: float = 90.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return True
            if self.proc.poll() is not None:
                time.sleep(0.2)
                return any(text in line for line in self.lines)
            time.sleep(0.1)
        return False

    def stop(self, sig: int = signal.SIGINT, timeout_s: float = 15.0) -> int:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        kill_group(self.proc.pid)  # anything the node started that outlived it
        with _live_lock:
            _live.pop(self.proc.pid, None)
        self._reader.join(timeout=5)
        return self.proc.returncode


def wait_until(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()
