"""A flood of forged selections from a keyless process (issue 26 #10; docs/SECURITY.md "Floods").

Real router, executor and simulator processes; the attacker (test/flooder.py) has an empty
ROS_HOME and publishes forged selections on the executor's topic as fast as it can. Meanwhile
genuine signed requests go through the router, an emergency stop among them: every one is
acknowledged (the router sends a selection again until its ack arrives; the executor answers a
copy it has with the first ack, and runs it once), and the refusals on disk stay a bounded
budget plus one summary record per window instead of one fsync'd record per forged message.
"""
from __future__ import annotations

import os
import signal
import time

import pytest
from procs import ROOT, NodeProcess, wait_until
from test_execute_security import _request
from test_executor_nodes import make_operators, read_records, start

pytestmark = pytest.mark.slow  # starts ROS processes and loads MiniLM

GENUINE = ['turn on the spotlight', 'what is the battery level', 'turn off the spotlight',
           'where are we', 'take a photo', 'emergency stop']


def test_genuine_signed_requests_are_served_through_a_flood_of_forged_selections(tmp_path):
    from tool_router.ros.client import RouteClient
    traces = tmp_path / 'traces'
    operators = make_operators(tmp_path / 'operators.yaml', pilots=('alice',))
    # served, not how fast: the default 2 s ack window is a latency bound, which a flooded
    # 2-core CI machine missed once (2026-12-02); the time to the ack is the benchmark's
    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
                         '-p', 'executor_ack_timeout_s:=15.0')
    sim = start('tool_router.ros.sim_vehicle', ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={traces}',
                     '-p', f'operators_file:={operators}',
                     '-p', f'trace_chain_key_file:={tmp_path / "chain.key"}',
                     ready='executor ready')
    empty_home = tmp_path / 'mallory'
    empty_home.mkdir()
    flooder = None
    client = None
    answers = {}
    try:
        assert router.wait_for('serving /route_request', 180), router.output
        client = RouteClient(wait_s=60)

        def call(text):
            req = _request(text, operators, 'alice')
            return client.call(req.text, timeout_s=60, execute=True,
                               request_id=req.request_id, signature=req)

        # the router's ack reader and the executor's writer match some time after start
        assert wait_until(lambda: call('what is the battery level').executed, 60, step_s=0.5)
        flooder = NodeProcess('flooder', env={'PYTHONPATH': f'{ROOT / "test"}:{ROOT}',
                                              'ROS_HOME': str(empty_home),
                                              'FLOOD_RATE': os.environ.get('FLOOD_RATE', '200')})
        assert flooder.wait_for('flooding', 60), flooder.output
        started = time.monotonic()
        time.sleep(3.0)  # the executor's reader is in the flood before the first genuine copy
        for text in GENUINE:
            answers[text] = call(text)
        # past one refusal window (10 s), so a summary record is due while the flood goes on
        time.sleep(max(0.0, 12.0 - (time.monotonic() - started)))
    finally:
        if flooder is not None:
            flooder.stop(signal.SIGINT)
        if client is not None:
            client.close()
        codes = [p.stop() for p in (executor, sim, router)]
    print(flooder.output if flooder else '')
    events = read_records(traces, events=True)
    for text, answer in answers.items():
        seen = [(r.get('record'), r.get('event'), r.get('stamp')) for r in events
                if r.get('request_id') == answer.request_id]
        assert answer.executed, (text, answer.message, seen)
    assert len(answers) == len(GENUINE)
    assert codes == [0, 0, 0]
    sent = next(line for line in flooder.output.splitlines() if line.startswith('sent '))
    forged = int(sent.split()[1])
    records = read_records(traces)
    security = [r for r in records if r.get('record') == 'security']
    summaries = [r for r in security if r['event'] == 'refusals_summarized']
    one_by_one = [r for r in security if r['event'] == 'execute_refused']
    finals = {r['request_id']: r for r in records if r.get('record') in (None, 'request')}
    print(f'forged sent: {forged}; refusals on disk one by one: {len(one_by_one)}, '
          f'summaries: {len(summaries)}; genuine acknowledged {len(answers)} of {len(GENUINE)}')
    assert forged > 200, sent  # the attacker did flood
    seconds = float(sent.split()[3])
    # a budget of 20 per 10 s window: the rest counted in one summary per window
    assert len(one_by_one) <= 20 * (int(seconds // 10) + 2), (len(one_by_one), seconds)
    assert all(r['reason'] == 'bad_router_signature' for r in one_by_one)
    summarized = sum(int(r['detail'].split()[0]) for r in summaries)
    print(f'summarized refusals: {summarized}')
    assert summaries and summarized > 0
    assert not any(rid.startswith('forged-') for rid in finals)  # nothing forged ran
    events = read_records(traces, events=True)
    missing = {t: [(r.get('record'), r.get('event')) for r in events
                   if r.get('request_id') == a.request_id]
               for t, a in answers.items() if a.request_id not in finals}
    assert not missing, missing
    assert 'emergency_stop' in answers['emergency stop'].tools
