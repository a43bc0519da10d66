"""Trace records: schema, append-only writer with rotation, reading, summary."""
from __future__ import annotations

import json

import pytest

from tool_router.executor.traces import (SCHEMA_VERSION, ConfirmationOutcome, Redactor, Stamps,
                                         ToolTrace, TraceError, TraceRecord, TraceWriter,
                                         format_summary, percentiles, read_traces, summarize,
                                         trace_files)


def record(i, outcome='dispatched', latency=5.0, confirm=None):
    t0 = 1000.0 + i
    tool = ToolTrace(tool='gps_position' if i % 2 else 'arm_motors', risk='none',
                     decision='confirm' if confirm else 'allow', reason='default',
                     outcome=outcome, latency_ms=latency,
                     confirmation=ConfirmationOutcome(outcome=confirm) if confirm else None,
                     failure_mode='' if outcome == 'dispatched' else 'call_failed')
    return TraceRecord(request_id=f'r{i}', mode='execute', request_text='x',
                       stamps=Stamps(received=t0, permissions_decided=t0 + 0.001,
                                     confirmations_resolved=t0 + 0.002,
                                     dispatch_done=t0 + 0.002 + latency / 1000),
                       tools=[tool], stop_reason='completed')


def test_schema_version_and_extra_fields_forbidden():
    rec = record(1)
    data = json.loads(rec.model_dump_json())
    assert data['schema_version'] == SCHEMA_VERSION == '1.0'
    data['surprise'] = 1
    with pytest.raises(Exception):
        TraceRecord.model_validate(data)


def test_writer_rotates_by_size_and_keeps_every_record(tmp_path):
    writer = TraceWriter(tmp_path, max_bytes=2048)
    for i in range(40):
        writer.write(record(i))
    writer.close()
    files = trace_files([tmp_path])
    assert len(files) > 3
    assert all(f.stat().st_size <= 2048 for f in files)
    ids = [r.request_id for f in files for r in read_traces(f)]
    assert ids == [f'r{i}' for i in range(40)]
    with pytest.raises(TraceError):
        writer.write(record(99))


def test_reader_names_bad_line(tmp_path):
    path = tmp_path / 't.jsonl'
    path.write_text(record(1).model_dump_json() + '\n{"schema_version": "1.0"}\n')
    with pytest.raises(TraceError, match=r't.jsonl:2: invalid record'):
        list(read_traces(path))
    path.write_text(record(1).model_dump_json())
    with pytest.raises(TraceError, match='truncated'):
        list(read_traces(path))


def test_summary_counts_and_percentiles():
    recs = [record(i, latency=float(i)) for i in range(1, 11)]
    recs.append(record(11, outcome='failed'))
    recs.append(record(12, outcome='denied', confirm='timeout'))
    s = summarize(recs)
    assert s['records'] == 12
    assert s['per_tool']['gps_position'] == {'dispatched': 5, 'failed': 1}
    assert s['per_tool']['arm_motors'] == {'dispatched': 5, 'denied': 1}
    assert s['failures'] == {'call_failed': 2}
    assert s['confirmations'] == {'timeout': 1}
    assert s['dispatch_call_latency_ms']['p50'] == pytest.approx(5.5)
    text = format_summary(s)
    assert 'gps_position' in text and 'p99' in text and 'timeout' in text


def test_percentiles_match_linear_interpolation():
    assert percentiles([1, 2, 3, 4], [50, 100]) == {'p50': 2.5, 'p100': 4}
    assert percentiles([]) == {}


def test_redactor_options():
    text = 'Bob: photo at 47.39N, 8.54E then 3 more'
    assert Redactor(False)(text) == text
    assert Redactor(True, names=['bob'])(text) == '<NAME>: photo at <COORD> then <NUM> more'
    assert Redactor(True, digits=False, coordinates=False)(text) == text


def test_mcap_bag_of_trace_messages(tmp_path):
    from rosbags.rosbag2 import Reader

    from tool_router.executor.bag import MSGTYPE, McapTraceBag
    bag = McapTraceBag(tmp_path)
    for i in range(3):
        bag.write(record(i))
    bag.close()
    with Reader(bag.path) as reader:
        msgs = [bag.typestore.deserialize_cdr(raw, conn.msgtype)
                for conn, _, raw in reader.messages()]
        assert [c.msgtype for c in reader.connections] == [MSGTYPE]
    assert [m.request_id for m in msgs] == ['r0', 'r1', 'r2']
    assert TraceRecord.model_validate_json(msgs[1].record_json).request_id == 'r1'
    assert list(msgs[2].outcomes) == ['dispatched'] and msgs[2].schema_version == '1.0'
