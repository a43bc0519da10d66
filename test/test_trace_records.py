"""Trace records: schema, append-only writer with rotation, reading, summary."""
from __future__ import annotations

import json

import pytest

from tool_router.executor.traces import (SCHEMA_VERSION, ConfirmationOutcome, Redactor, Stamps,
                                         ToolTrace, TraceError, TraceEvent, TraceRecord,
                                         TraceWriter, fold, format_summary,
                                         read_traces, summarize, trace_files)


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
    assert data['schema_version'] == SCHEMA_VERSION == '2.2' and data['record'] == 'request'
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


# A record as version 1.0 wrote it (before write-ahead events): still read and summarised.
V1_LINE = ('{"schema_version":"1.0","request_id":"old1","mode":"execute","request_text":"x",'
           '"redacted":false,"policy":"lcr","fallback_used":false,"candidates":[],'
           '"validation_drops":[],"stamps":{"routed":null,"received":1.0,'
           '"permissions_decided":1.001,"confirmations_resolved":1.002,"dispatch_done":1.01},'
           '"tools":[{"tool":"gps_position","risk":"none","score":0.5,"clause_index":0,'
           '"condition":"","decision":"allow","reason":"default","confirmation":null,'
           '"outcome":"dispatched","endpoint":"trigger:/sim/gps_position","message":"ok",'
           '"latency_ms":3.0,"finished":1.01,"failure_mode":""}],"failure_mode":"",'
           '"stop_reason":"completed","notes":[]}\n')


def event(rid, kind, tool='', stamp=1.0, **kw):
    return TraceEvent(event=kind, request_id=rid, stamp=stamp, tool=tool, **kw)


def test_version_1_files_are_still_read(tmp_path):
    path = tmp_path / 'old.jsonl'
    path.write_text(V1_LINE)
    (rec,) = list(read_traces(path))
    assert rec.schema_version == '1.0' and rec.request_id == 'old1'
    s = summarize([rec])
    assert s['records'] == 1 and s['unfinished'] == [] and s['per_tool']['gps_position']


def test_version_2_0_files_without_evidence_are_still_read(tmp_path):
    path = tmp_path / 'v2.jsonl'
    v2 = V1_LINE.replace('"schema_version":"1.0"', '"schema_version":"2.0","record":"request"')
    event_line = ('{"schema_version":"2.0","record":"event","event":"received",'
                  '"request_id":"old1","stamp":1.0}\n')
    path.write_text(event_line + v2)
    ev, rec = list(read_traces(path))
    assert ev.schema_version == rec.schema_version == '2.0'
    assert rec.tools[0].evidence == [] and rec.tools[0].tool == 'gps_position'
    assert fold([ev, rec])['old1'].finished


def test_fold_joins_events_and_reports_unfinished(tmp_path):
    writer = TraceWriter(tmp_path)
    writer.write(event('a', 'received', tools=['arm_motors']))
    writer.write(event('a', 'awaiting_confirmation', 'arm_motors'))
    writer.write(event('b', 'received', tools=['gps_position']))
    writer.write(record(7).model_copy(update={'request_id': 'b'}))
    writer.close()
    records = list(read_traces(writer.path))
    views = fold(records)
    assert views['b'].finished and not views['a'].finished
    assert views['a'].last_state == 'awaiting_confirmation arm_motors'
    s = summarize(records)
    assert (s['requests'], s['records'], s['events']) == (2, 1, 3)
    assert [u['request_id'] for u in s['unfinished']] == ['a']
    assert 'unfinished requests: 1' in format_summary(s)


def test_reader_skips_and_counts_bad_lines(tmp_path):
    path = tmp_path / 't.jsonl'
    good = record(1).model_dump_json() + '\n'
    path.write_bytes((good + '{"schema_version": "2.0", "tools": \n' + '[1, 2]\n'
                      + '{"record": "alien", "schema_version": "2.0"}\n'
                      + '{"schema_version": "9.9", "request_id": "x"}\n' + good).encode()
                     + b'\xff\xfe\n' + good[:40].encode())
    bad: list[str] = []
    records = list(read_traces(path, bad))
    assert len(records) == 2 and len(bad) == 6
    assert 't.jsonl:2: not JSON' in bad[0] and 'unknown record kind' in bad[2]
    assert 'schema_version' in bad[3] and 'not UTF-8' in bad[4] and 'truncated' in bad[5]


WRITE_UNTIL_FULL = """
import resource, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_trace_records import record
from tool_router.executor.traces import TraceError, TraceWriter
writer = TraceWriter(sys.argv[1], max_bytes=10_000_000)
writer.write(record(0))
size = Path(writer.path).stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 300, resource.RLIM_INFINITY))
errors = 0
for i in range(1, 6):
    try:
        writer.write(record(i))
    except TraceError as exc:
        errors += 1
        print('error:', exc)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
writer.write(record(99))
writer.close()
print('errors', errors)
"""


def test_write_error_never_leaves_a_torn_line_before_a_good_one(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    out = subprocess.run([sys.executable, '-c', WRITE_UNTIL_FULL, str(tmp_path),
                          str(Path(__file__).parent)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert 'errors 5' in out.stdout and 'File too large' in out.stdout
    files = trace_files([tmp_path])
    records = [r for f in files for r in read_traces(f)]  # strict: raises on any bad line
    assert [r.request_id for r in records] == ['r0', 'r99']
    assert all(f.read_bytes().endswith(b'\n') for f in files)


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


def test_redactor_options():
    text = 'Bob: photo at 47.39N, 8.54E then 3 more'
    assert Redactor(False)(text) == text
    redacted = '<name>: photo at <coordinates> then <number> more'
    assert Redactor(True, names=['bob'])(text) == redacted
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
    expected = [(record(2).tools[0].tool, 'dispatched')]
    assert [(t.tool, t.outcome) for t in msgs[2].tools] == expected
    assert msgs[2].schema_version == record(2).schema_version
