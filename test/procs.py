"""Start the package's nodes as real processes for integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent


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
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=full_env,
            cwd=ROOT,
            start_new_session=True,
        )
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
        self._reader.join(timeout=5)
        return self.proc.returncode


def wait_until(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()
