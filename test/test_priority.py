"""serving.nice: every thread of the process gets the value; a refused value warns, never raises.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tool_router.routing import serving
from tool_router.routing.serving import ServingParams, apply_priority, set_priority


def test_nice_zero_leaves_the_process_as_it_was(monkeypatch):
    calls = []
    monkeypatch.setattr(os, 'setpriority', lambda *a: calls.append(a))
    assert apply_priority(0) == '' and calls == []
    assert ServingParams().nice == 0  # the shipped default changes nothing


def test_every_thread_gets_the_value_and_new_threads_inherit_it():
    # in a child process: a raised nice value cannot be lowered again without privileges
    code = textwrap.dedent('''
        import os, threading
        from tool_router.routing.serving import set_priority
        stop = threading.Event()
        early = threading.Thread(target=stop.wait); early.start()
        nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 2)
        assert set_priority(nice) == ''
        late = threading.Thread(target=stop.wait); late.start()
        values = {os.getpriority(os.PRIO_PROCESS, int(t)) for t in os.listdir('/proc/self/task')}
        stop.set(); early.join(); late.join()
        print(nice, sorted(values), threading.active_count())
    ''')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert out[1] == f'[{out[0]}]'  # main, the thread started before and the one after


def test_a_refused_value_warns_and_changes_no_thread(monkeypatch):
    # Simulated refusal (this test may run as root, where every value is permitted):
    # the first thread is set, the second refused; the first is put back.
    calls = []

    def setpriority(which, who, value):
        calls.append((who, value))
        if len(calls) == 2:
            raise PermissionError(1, 'Operation not permitted')

    monkeypatch.setattr(serving.os, 'setpriority', setpriority)
    monkeypatch.setattr(serving.os, 'listdir', lambda path: ['101', '102', '103'])
    monkeypatch.setattr(serving.os, 'getpriority', lambda which, who: 0)
    warning = set_priority(-10)
    assert 'not permitted' in warning and 'keeps nice 0' in warning
    assert calls == [(101, -10), (102, -10), (101, 0)]


@pytest.mark.parametrize('bad', [-21, 20])
def test_nice_outside_the_kernel_range_is_refused(bad):
    with pytest.raises(ValueError):
        ServingParams(nice=bad)
