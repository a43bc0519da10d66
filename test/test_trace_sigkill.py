"""A SIGKILLed executor leaves only complete, valid trace records (fsync per record)."""
from __future__ import annotations

import signal
import threading
import time

import pytest
from procs import wait_until
from test_executor_nodes import UNSIGNED, RosPeer, read_records, start

from tool_router.executor.traces import read_traces, trace_files

pytestmark = pytest.mark.slow  # starts ROS or server processes


def test_trace_files_survive_sigkill_mid_stream(tmp_path):
    trace_dir = tmp_path / 'traces'
    executor = start('tool_router.ros.executor_node', '-p', 'mode:=dry_run', *UNSIGNED,
                     '-p', f'trace_dir:={trace_dir}', '-p', 'trace_max_bytes:=8192',
                     '-p', 'selection_topic:=/test/selected_kill',
                     '-p', 'confirm_service:=/test_kill/confirm',
                     '-p', 'confirmation_topic:=/test_kill/confirmation_requests',
                     '-p', 'trace_topic:=/test_kill/traces', ready='executor ready')
    peer = RosPeer()
    stop = threading.Event()
    sent = [0]

    def stream() -> None:
        tools = ['battery_status', 'gps_position', 'rgb_camera', 'weather_sensor']
        while not stop.is_set():
            try:
                peer.select('/test/selected_kill', tools, 'status check ' * 20)
            except Exception:  # noqa: BLE001 - publisher gone after the kill
                return
            sent[0] += 1
            time.sleep(0.002)
    try:
        peer.publisher('/test/selected_kill')
        worker = threading.Thread(target=stream, daemon=True)
        worker.start()
        assert wait_until(lambda: len(read_records(trace_dir)) >= 60, 30)
        assert executor.stop(signal.SIGKILL) == -signal.SIGKILL  # mid-stream
        stop.set()
        worker.join(5)
    finally:
        stop.set()
        peer.close()
        executor.stop()
    files = trace_files([trace_dir])
    assert len(files) >= 2, 'expected rotation at 8 kB'
    lines = [rec for path in files for rec in read_traces(path)]  # raises on any bad line
    for path in files:
        assert path.read_bytes().endswith(b'\n')
    records = [r for r in lines if r.record == 'request']
    assert len(records) >= 60 and sent[0] > len(records) // 2
    assert len({r.request_id for r in records}) == len(records)
    assert all(r.mode == 'dry_run' and r.schema_version == '2.2' for r in records)
    assert all([t.outcome for t in r.tools] == ['dry_run'] * 4 for r in records)
    received = {r.request_id for r in lines if r.record == 'event' and r.event == 'received'}
    assert {r.request_id for r in records} <= received  # written ahead of each final record
