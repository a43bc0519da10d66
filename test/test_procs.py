"""Test-process hygiene: node process groups are killed, ROS domains are not shared.

Fast tier: plain Python children, no ROS.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import procs
from procs import ROOT, NodeProcess, wait_until

from tool_router.ros import domain as ros_domain

# a "node" that starts a grandchild in its own process group, prints both pids and waits
CHILD = textwrap.dedent('''
    import os, subprocess, sys, time
    grandchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])
    print('pids', os.getpid(), grandchild.pid, flush=True)
    time.sleep(300)
''')


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    with open(f'/proc/{pid}/stat') as f:
        return f.read().split(') ')[-1][0] != 'Z'


def child_module(tmp_path):
    (tmp_path / 'sleeper_node.py').write_text(CHILD)
    return {'PYTHONPATH': str(tmp_path)}


def pids_of(proc: NodeProcess) -> list[int]:
    assert proc.wait_for('pids', 60), proc.output
    line = next(line for line in proc.lines if line.startswith('pids'))
    return [int(p) for p in line.split()[1:]]


def test_stop_all_kills_the_whole_process_group(tmp_path, monkeypatch):
    monkeypatch.setattr(procs, '_live', {})  # other modules' node processes are not ours to kill
    proc = NodeProcess('sleeper_node', env=child_module(tmp_path))
    pids = pids_of(proc)
    assert all(alive(p) for p in pids)
    procs.stop_all()
    assert wait_until(lambda: not any(alive(p) for p in pids), 30), pids
    assert proc.proc.pid not in procs._live


def test_node_processes_die_with_the_test_process(tmp_path):
    """A SIGKILLed pytest cannot clean up: the kernel sends the node SIGTERM (PDEATHSIG)."""
    script = textwrap.dedent(f'''
        import sys, time
        sys.path[:0] = [{str(ROOT / 'test')!r}, {str(ROOT)!r}]
        from procs import NodeProcess
        proc = NodeProcess('sleeper_node', env={{'PYTHONPATH': {str(tmp_path)!r}}})
        assert proc.wait_for('pids', 60)
        print(proc.proc.pid, flush=True)
        time.sleep(300)
    ''')
    (tmp_path / 'sleeper_node.py').write_text(CHILD)
    parent = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        node = int(parent.stdout.readline())
        assert alive(node)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert wait_until(lambda: not alive(node), 30)
    finally:
        procs.kill_group(parent.pid)


def test_sigterm_ends_a_run_and_its_nodes(tmp_path):
    """SIGTERM to the test process (a CI timeout) kills the nodes' groups before it ends."""
    script = textwrap.dedent(f'''
        import sys, time, threading
        sys.path[:0] = [{str(ROOT / 'test')!r}, {str(ROOT)!r}]
        import procs
        procs.install_interrupt_handlers()
        proc = procs.NodeProcess('sleeper_node', env={{'PYTHONPATH': {str(tmp_path)!r}}})
        assert proc.wait_for('pids', 60)
        try:  # the signal may come as soon as the pids are out
            print(' '.join(l for l in proc.lines if l.startswith('pids')), flush=True)
            time.sleep(300)
        except KeyboardInterrupt:
            print('interrupted', flush=True)
    ''')
    (tmp_path / 'sleeper_node.py').write_text(CHILD)
    parent = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()[1:]]
        assert len(pids) == 2 and all(alive(p) for p in pids)
        parent.send_signal(signal.SIGTERM)
        assert parent.stdout.readline().strip() == 'interrupted'
        parent.wait(30)
        assert wait_until(lambda: not any(alive(p) for p in pids), 30), pids
    finally:
        procs.kill_group(parent.pid)


HOLDER = textwrap.dedent('''
    import os, sys, time
    sys.path.insert(0, {root!r})
    os.environ['TMPDIR'] = {tmp!r}
    from tool_router.ros import domain as ros_domain
    print(ros_domain.claim_domain(), flush=True)
    time.sleep(300)
''')


def test_a_claimed_domain_is_not_claimed_again_until_its_holder_dies(tmp_path, monkeypatch):
    monkeypatch.setenv('TMPDIR', str(tmp_path))
    monkeypatch.setattr(ros_domain, '_held', {})
    import tempfile
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    holder = subprocess.Popen(
        [sys.executable, '-c', HOLDER.format(root=str(ROOT), tmp=str(tmp_path))],
        stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        theirs = int(holder.stdout.readline())
        assert ros_domain.FIRST <= theirs <= ros_domain.LAST
        lock = ros_domain.lock_dir() / f'{theirs}.lock'
        assert lock.exists() and lock.read_text().strip() == str(holder.pid)
        mine = [ros_domain.claim_domain() for _ in range(3)]
        assert theirs not in mine and len(set(mine)) == 3
        holder.send_signal(signal.SIGKILL)  # no clean-up runs: the kernel drops the lock
        holder.wait(10)
        claimed = [ros_domain.claim_domain()
                   for _ in range(ros_domain.LAST - ros_domain.FIRST + 1 - 3)]
        assert theirs in claimed
    finally:
        procs.kill_group(holder.pid)
        ros_domain.release()


def test_an_explicit_domain_is_kept(monkeypatch):
    monkeypatch.setenv('ROS_DOMAIN_ID', '42')
    assert ros_domain.private_domain() == 42


def test_a_run_claims_a_pool_of_domains_unless_one_is_given(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    monkeypatch.setattr(ros_domain, '_held', {})
    monkeypatch.delenv('ROS_DOMAIN_ID', raising=False)
    try:
        pool = ros_domain.private_domains(4)
        assert len(set(pool)) == 4 and int(os.environ['ROS_DOMAIN_ID']) == pool[0]
        assert sorted(ros_domain._held) == sorted(pool)  # each one locked, passed to children
        assert ros_domain.private_domains(4)[0] == pool[0]  # the environment's stays first
    finally:
        ros_domain.release()
    monkeypatch.setenv('ROS_DOMAIN_ID', '42')
    assert ros_domain.private_domains(4) == [42]  # an explicit domain is all a run uses


def test_a_released_pool_holds_nothing_and_an_explicit_domain_in_it_is_kept(
        tmp_path, monkeypatch):
    """The fresh-clone failure: the pool claimed before included 42, and 42 stayed in
    ``_held`` after its descriptor was closed, so an explicit ROS_DOMAIN_ID=42 read as
    claimed by this process and three more domains were claimed beside it."""
    import fcntl
    import tempfile
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    monkeypatch.setattr(ros_domain, '_held', {})
    monkeypatch.delenv('ROS_DOMAIN_ID', raising=False)
    monkeypatch.setattr(os, 'getpid', lambda: 41)  # the probe starts at FIRST + 41 = 42
    pool = ros_domain.private_domains(4)
    assert pool == [42, 43, 44, 45]
    ros_domain.release()
    assert ros_domain._held == {} and ros_domain.held_fds() == ()
    for domain in pool:  # the locks are free again: anyone may take them
        fd = os.open(ros_domain.lock_dir() / f'{domain}.lock', os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    monkeypatch.setenv('ROS_DOMAIN_ID', '42')
    assert ros_domain.private_domains(4) == [42]
    assert ros_domain._held == {}


def test_releasing_one_domain_keeps_the_others(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    monkeypatch.setattr(ros_domain, '_held', {})
    first, second = ros_domain.claim_domain(), ros_domain.claim_domain()
    try:
        ros_domain.release(first)
        assert list(ros_domain._held) == [second] and len(ros_domain.held_fds()) == 1
        ros_domain.release(first)  # twice: nothing more to do
        assert list(ros_domain._held) == [second]
    finally:
        ros_domain.release()


def test_this_module_runs_in_a_domain_of_the_runs_pool(module_domain):
    import conftest
    assert os.environ['ROS_DOMAIN_ID'] == str(module_domain)  # what its nodes inherit
    assert module_domain in conftest.DOMAINS
    if conftest.DOMAINS[0] in ros_domain._held:  # claimed here, not an explicit ROS_DOMAIN_ID
        assert len(set(conftest.DOMAINS)) == conftest.DOMAINS_PER_RUN
