"""What the operator reads: per-tool outcome lines, hints with the namespace, a request's story,
one-line errors for bad parameters files (pure, plus the CLI in-process and one node process)."""
from __future__ import annotations

import subprocess
import sys

import pytest
from procs import ROOT

from tool_router.cli.main import main
from tool_router.executor.story import (confirm_hint, find_request, outcome_lines, record_ok,
                                        story, waiting_lines, watch_lines)
from tool_router.executor.traces import (ConfirmationOutcome, Stamps, ToolTrace, TraceEvent,
                                         TraceRecord, TraceWriter, WatchRecord)

T0 = 1796193100.0


def tool(name, outcome='dispatched', **kw):
    fields = dict(tool=name, risk='motion', decision='allow', reason='motion: allow',
                  outcome=outcome, endpoint=f'trigger:sim/{name}', message='')
    fields.update(kw)
    return ToolTrace(**fields)


def record(*tools, rid='r1', stop='completed', text='arm the motors and take off'):
    return TraceRecord(request_id=rid, mode='execute', request_text=text, requested_by='alice',
                       policy='lcr', stamps=Stamps(received=T0, permissions_decided=T0 + .01,
                                                   confirmations_resolved=T0 + 3,
                                                   dispatch_done=T0 + 3.1),
                       tools=list(tools), stop_reason=stop)


ARMED = tool('arm_motors', decision='confirm', risk='critical', message='motors armed',
             confirmation=ConfirmationOutcome(outcome='approved', operator_name='alice',
                                              waited_s=2.94))
FAILED = tool('takeoff', 'failed', failure_mode='call_failed',
              message='refused: take off while disarmed')
SKIPPED = tool('rgb_camera', 'skipped_after_failure',
               message='skipped: takeoff was denied or failed earlier in the request')
DENIED = tool('arm_motors', 'denied', decision='confirm', risk='critical',
              failure_mode='confirmation_timeout', message='no operator decision within 30 s',
              confirmation=ConfirmationOutcome(outcome='timeout', waited_s=30.0))


def test_one_line_per_tool_with_endpoint_outcome_and_what_the_vehicle_said():
    lines = outcome_lines(record(ARMED, tool('takeoff', message='took off, holding at 10.0 m')))
    assert lines == [
        'arm_motors  trigger:sim/arm_motors  dispatched  motors armed (approved by alice after '
        '2.9 s)',
        'takeoff     trigger:sim/takeoff     dispatched  took off, holding at 10.0 m',
        '[completed; every tool done]']
    assert record_ok(record(ARMED))


def test_failures_and_refusals_say_why_and_are_not_ok():
    rec = record(ARMED, FAILED, SKIPPED, stop='aborted_after:takeoff')
    lines = outcome_lines(rec)
    assert 'failed      call_failed: refused: take off while disarmed' in lines[1]
    assert 'skipped_after_failure skipped: takeoff was denied or failed' in lines[2]
    assert lines[-1] == '[aborted_after:takeoff; not done: takeoff, rgb_camera]'
    assert not record_ok(rec)
    denied = outcome_lines(record(DENIED, stop='completed_with_errors'))[0]
    assert 'denied      confirmation_timeout: no operator decision within 30 s' in denied
    assert not record_ok(record(DENIED)) and not record_ok(record())  # no tool is not done


def test_a_sensor_reading_line_is_left_to_the_watches():
    sensor = tool('battery_status',
                  message='battery 99.5 %, 16.78 V\nreading: {"battery_pct": 99.5}')
    assert outcome_lines(record(sensor))[0].endswith('dispatched  battery 99.5 %, 16.78 V')


def test_every_hint_carries_the_namespace_and_the_operator():
    assert confirm_hint('abc', 'arm_motors') == 'tool-router confirm abc arm_motors --approve'
    assert confirm_hint('abc', 'arm_motors', '/uav1/', 'alice') == \
        'tool-router confirm abc arm_motors --approve --operator alice --namespace uav1'
    wait = waiting_lines('abc', 'arm_motors', 'critical', 30.0, 'uav1', 'alice')
    assert wait[0] == ('arm_motors (critical) waits for an operator: denied unless confirmed '
                       'within 30 s')
    assert '--namespace uav1' in wait[1]
    watch = WatchRecord(event='armed', stamp=T0, watch_id='w-1', request_id='abc', tool='land',
                        condition='when it drops below 25%',
                        predicate='battery_status.battery_pct < 25 %', sensor='battery_status',
                        expires=T0 + 600)
    (line,) = watch_lines(watch, 'uav1', now=T0 + 1)
    assert line.startswith('watch w-1 expires at ') and 'UTC (in 599 s) unless' in line
    assert line.endswith('tool-router watch list --namespace uav1 | '
                         'tool-router watch cancel w-1 --namespace uav1')


def write_story(directory):
    writer = TraceWriter(directory, fsync=False)
    rid = 'd892ad84953f4f8b'
    for event in (TraceEvent(event='received', request_id=rid, stamp=T0, mode='execute',
                             tools=['arm_motors', 'takeoff'], request_text='arm and take off'),
                  TraceEvent(event='permission_decided', request_id=rid, stamp=T0 + .01,
                             tools=['arm_motors', 'takeoff'], decisions=['confirm', 'allow']),
                  TraceEvent(event='awaiting_confirmation', request_id=rid, stamp=T0 + .02,
                             tool='arm_motors', detail='timeout 30 s'),
                  TraceEvent(event='confirmation', request_id=rid, stamp=T0 + 2.9,
                             tool='arm_motors', outcome='approved', detail='alice')):
        writer.write(event)
    writer.write(record(ARMED, FAILED, rid=rid, stop='completed_with_errors'))
    writer.write(record(tool('gps_position'), rid='other'))
    writer.close()
    return rid


def test_story_tells_decisions_confirmations_and_outcomes_in_order(tmp_path):
    rid = write_story(tmp_path)
    from tool_router.executor.traces import read_traces, trace_files
    records = [r for f in trace_files([tmp_path]) for r in read_traces(f)]
    full, mine = find_request(records, rid[:6])  # a unique start of the id is enough
    assert full == rid and len(mine) == 5
    text = '\n'.join(story(full, mine))
    order = ['received (execute mode): arm_motors, takeoff', 'arm_motors confirm, takeoff allow',
             'arm_motors waits for an operator (timeout 30 s)',
             'arm_motors confirmation: approved by alice', 'finished: completed_with_errors',
             'call_failed: refused: take off while disarmed']
    assert [text.index(part) for part in order] == sorted(text.index(p) for p in order)
    assert 'requested by alice' in text and 'gps_position' not in text
    with pytest.raises(ValueError, match='start of 2'):
        find_request([record(rid='ab1'), record(rid='ab2')], 'ab')


def test_trace_show_reads_the_files_of_every_namespace(tmp_path, capsys):
    rid = write_story(tmp_path / 'uav1')  # a sub-directory, as per-vehicle trace dirs are
    assert main(['trace', 'show', rid, str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f'request {rid}: "arm the motors and take off"')
    assert 'takeoff     trigger:sim/takeoff     failed' in out
    assert main(['trace', 'show', 'nosuchid', str(tmp_path)]) == 1
    assert 'no record of request nosuchid' in capsys.readouterr().err


@pytest.mark.parametrize('content, message', [
    (None, 'no such parameters file'),
    ('a: [\n', 'invalid YAML'),
    ('a: 1\n', 'a: a value outside ros__parameters'),
    ('executor_node:\n  ros__parameters:\n    mode: execute\n  confirm_timeout_s: 20\n',
     'executor_node.confirm_timeout_s: a value outside ros__parameters'),
    ('- 1\n', 'expected NODE_NAME: {ros__parameters: {...}} at the top level'),
    ('executor_node:\n  ros__parameters: 3\n', 'executor_node.ros__parameters: expected a '
                                               'mapping'),
])
def test_serve_refuses_a_bad_parameters_file_in_one_line(tmp_path, capsys, content, message):
    path = tmp_path / 'exec.yaml'
    if content is not None:
        path.write_text(content)
    assert main(['serve', '--sim', '--executor-config', str(path)]) == 2  # nothing started
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith('tool-router: error: --executor-config ')
    assert message in err


def test_serve_accepts_the_shipped_parameters_files():
    from tool_router.cli.core import check_params_file
    for name in ('router.yaml', 'executor.yaml', 'executor_mavlink.yaml'):
        check_params_file(str(ROOT / 'config' / name), '--config')


@pytest.mark.slow
def test_a_node_given_a_missing_params_file_says_so_in_one_line(tmp_path):
    out = subprocess.run([sys.executable, '-m', 'tool_router.ros.executor_node', '--ros-args',
                          '--params-file', str(tmp_path / 'missing.yaml')], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert 'Traceback' not in out.stderr
    assert f'cannot start: parameters file {tmp_path / "missing.yaml"}: Error opening YAML ' \
           'file' in out.stderr


def test_a_missing_chain_key_names_the_executor_not_operator_add(tmp_path, capsys):
    (tmp_path / 'traces').mkdir()
    code = main(['trace', 'verify', str(tmp_path / 'traces'), '--chain-key',
                 str(tmp_path / 'nokey')])
    err = capsys.readouterr().err
    assert code == 2 and 'no trace chain key' in err
    assert 'the executor creates it' in err and 'operator add' not in err


def test_every_verb_that_talks_to_nodes_moves_its_names_under_the_namespace():
    from tool_router.cli.common import in_namespace
    from tool_router.cli.main import build_parser
    parser = build_parser()
    args = parser.parse_args(['eval', '--dataset', 'd', '--out', 'o', '--live',
                              '--namespace', 'uav1', '--selection-topic', '/mine'])
    in_namespace(args, ('service', '/route_request'),
                 ('selection_topic', '/tool_router/decisions'))
    assert (args.service, args.selection_topic) == ('/uav1/route_request', '/mine')
    for argv in (['call', 'x'], ['confirm'], ['watch', 'list'], ['trace', 'tail'],
                 ['bag', 'record-selections', '--out', 'o', '--duration', '1'],
                 ['eval', '--dataset', 'd', '--out', 'o']):
        assert parser.parse_args(argv + ['--namespace', 'uav1']).namespace == 'uav1', argv
