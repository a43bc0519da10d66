"""Traces per namespace: every record says whose it is (schema 2.2), recovery and summaries
never cross vehicles (tool_router/executor/traces.py, docs/EXECUTOR.md)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_trace_records import V1_LINE, event, record

from tool_router.executor.auth import SecurityRecord
from tool_router.executor.config import ExecutorConfig, default_trace_dir
from tool_router.executor.traces import (TraceWriter, WatchRecord, read_traces,
                                         restart_cancellations, trace_files)

KEY = bytes(range(32))


def watch(wid: str, event_: str = 'armed', rid: str = 'r') -> WatchRecord:
    return WatchRecord(event=event_, stamp=1.0, watch_id=wid, request_id=rid, tool='land',
                       condition='when the battery drops below 25%',
                       predicate='battery_status.battery_pct < 25 %', sensor='battery_status',
                       expires=9e9)


def write(directory, namespace, *records, chain_key=None):
    writer = TraceWriter(directory, namespace=namespace, fsync=False, chain_key=chain_key)
    for rec in records:
        writer.write(rec)
    writer.close()
    return writer.path


def test_every_record_kind_carries_the_writers_namespace(tmp_path):
    security = SecurityRecord(event='execute_refused', stamp=1.0, request_id='r',
                              tool='land', claimed_operator='x', key_id='k', reason='unsigned',
                              detail='')
    path = write(tmp_path, '/uav1', record(1), event('r', 'received'), watch('w1'), security)
    recs = list(read_traces(path))
    assert [type(r).__name__ for r in recs] == ['TraceRecord', 'TraceEvent', 'WatchRecord',
                                                'SecurityRecord']
    assert {r.namespace for r in recs} == {'/uav1'}
    assert {r.schema_version for r in recs} == {'2.2'}
    # files written before schema 2.2 still read, their namespace not recorded
    old = tmp_path / 'old.jsonl'
    old.write_text(V1_LINE + V1_LINE.replace('"schema_version":"1.0"',
                                             '"schema_version":"2.1","record":"request"'))
    assert [(r.schema_version, r.namespace) for r in read_traces(old)] == [('1.0', ''),
                                                                          ('2.1', '')]


def test_restart_recovery_cancels_only_its_own_namespaces_watches(tmp_path):
    # two vehicles writing to one directory (an explicit shared trace_dir)
    write(tmp_path, '/uav1', watch('w-uav1'))
    write(tmp_path, '/uav2', watch('w-uav2'), watch('w-uav2-done'),
          watch('w-uav2-done', 'fired'))
    legacy = tmp_path / 'legacy.jsonl'  # before 2.2: no namespace, recovered by anyone (as before)
    legacy.write_text(watch('w-old').model_dump_json(exclude={'namespace'}).replace(
        '"2.2"', '"2.1"') + '\n')
    files = trace_files([tmp_path])
    cancelled = restart_cancellations(files, 5.0, 'executor restarted', namespace='/uav2')
    assert sorted(w.watch_id for w in cancelled) == ['w-old', 'w-uav2']
    assert all(w.event == 'cancelled' and w.reason == 'executor restarted' for w in cancelled)
    assert {w.namespace for w in cancelled} == {'/uav2', ''}
    assert [w.watch_id for w in restart_cancellations(files, 5.0, 'x', namespace='/uav1')] == [
        'w-uav1', 'w-old']


def test_default_trace_directory_is_per_namespace(ros_home):
    assert default_trace_dir() == ros_home / 'tool_router' / 'traces'
    assert default_trace_dir('/uav1') == ros_home / 'tool_router' / 'traces' / 'uav1'
    config = ExecutorConfig()
    assert config.resolved_trace_dir('/fleet/uav2') == default_trace_dir('fleet/uav2')
    # its own nonce file even in a shared explicit trace_dir (the store rewrites it at start)
    assert config.resolved_nonce_file('/uav1') == (default_trace_dir('uav1')
                                                   / 'executor.uav1.nonces')
    assert config.resolved_nonce_file('/') == default_trace_dir() / 'executor.nonces'
    assert ExecutorConfig(trace_dir='/d').resolved_nonce_file('/a/b') == \
        Path('/d/executor.a.b.nonces')
    assert config.resolved_trace_dir('/') == default_trace_dir()
    explicit = ExecutorConfig(trace_dir='/data/traces')
    assert str(explicit.resolved_trace_dir('/uav1')) == '/data/traces'


def cli(*args: str, home=None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({'ROS_HOME': str(home)} if home else {})}
    return subprocess.run([sys.executable, '-m', 'tool_router.cli', *args], capture_output=True,
                          text=True, timeout=60, env=env)


def test_trace_summary_is_per_namespace_never_merged(tmp_path):
    home = tmp_path / 'home'
    base = home / 'tool_router' / 'traces'
    write(base / 'uav1', '/uav1', record(1), record(3))
    write(base / 'uav2', '/uav2', record(2, outcome='failed'), watch('w2'))
    out = cli('trace', 'summary', '--json', home=home)
    assert out.returncode == 0, out.stderr
    per_ns = json.loads(out.stdout)['namespaces']
    assert list(per_ns) == ['/uav1', '/uav2']
    assert (per_ns['/uav1']['records'], per_ns['/uav2']['records']) == (2, 1)
    assert per_ns['/uav2']['failures'] == {'call_failed': 1} and per_ns['/uav1']['failures'] == {}
    assert per_ns['/uav2']['watches_left_armed'] and not per_ns['/uav1']['watches_left_armed']
    text = cli('trace', 'summary', home=home).stdout
    assert 'namespace: /uav1\nrequests: 2  records: 2' in text
    assert 'namespace: /uav2\nrequests: 2  records: 1' in text
    one = cli('trace', 'summary', '--json', '--namespace', 'uav2', home=home)
    summary = json.loads(one.stdout)
    assert (summary['namespace'], summary['records']) == ('/uav2', 1)
    absent = cli('trace', 'summary', '--namespace', 'uav9', home=home)
    assert absent.returncode == 1 and absent.stderr.strip() == (
        'tool-router: no records of namespace /uav9 in 2 file(s) (namespaces there: /uav1, '
        '/uav2)')
    # a directory given on the command line: read with its subdirectories, split the same way
    assert list(json.loads(cli('trace', 'summary', str(base), '--json').stdout)['namespaces']) \
        == ['/uav1', '/uav2']


def test_trace_verify_takes_a_namespace(tmp_path):
    home = tmp_path / 'home'
    base = home / 'tool_router' / 'traces'
    key_file = home / 'tool_router' / 'keys' / 'trace-chain.key'
    key_file.parent.mkdir(parents=True)
    key_file.write_text(KEY.hex() + '\n')
    os.chmod(key_file, 0o600)
    write(base / 'uav1', '/uav1', record(1), chain_key=KEY)
    write(base / 'uav2', '/uav2', record(2), record(4), chain_key=KEY)
    one = cli('trace', 'verify', '--namespace', '/uav2', home=home)
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines() == [f'{base / "uav2"}: chain intact: 2 records in 1 file(s), '
                                       '1 signed manifest(s)']
    both = cli('trace', 'verify', home=home)
    assert both.returncode == 0, both.stderr
    assert [line.split(':')[0] for line in both.stdout.splitlines()] == [
        str(base / 'uav1'), str(base / 'uav2')]
