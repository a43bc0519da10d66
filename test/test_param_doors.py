"""Parameters fixed at start (issues 26.1, 28.3): the tables, and a keyless attacker over DDS.

The parameter services of both nodes are open to every process on the DDS domain. The
pure part checks the one table per node (every declared parameter classified, only the
harmless ones writable) and the executor's refusal of unknown names at start; the slow
part starts the real router and executor and lets a process with an empty ROS_HOME try
to set, delete and atomically set every parameter either node lists.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tool_router.common.errors import ConfigError
from tool_router.common.param_doors import RESTART, ROS_OWN, unknown_names, unknown_problem
from tool_router.common.param_doors import flatten as _flat
from tool_router.executor.config import (EXECUTOR_DOORS, EXECUTOR_FIXED, ExecutorConfig,
                                         load_executor_config, start_parameters)
from tool_router.routing.config import ROUTER_FIXED, load_router_config, router_doors

HERE = Path(__file__).resolve().parent

# What the outside attacker changed (issue 26 item 1), by node.
ATTACKED = {
    'router_node': ['lcr.threshold', 'policy', 'llm.url', 'max_tools', 'use_sim_time'],
    'executor_node': ['mode', 'max_selection_age_s', 'watch_ttl_s', 'stop_on_failure',
                      'confirm_timeout_s', 'use_sim_time', 'bindings.land'],
}


def router_names() -> list[str]:
    """Every parameter the router node declares (as router_node.py does) and rclpy's."""
    return _flat(load_router_config().model_dump(mode='json')) + ['autostart', *ROS_OWN]


def executor_names() -> list[str]:
    return _flat(load_executor_config().model_dump(mode='json')) + ['autostart', *ROS_OWN]


def test_every_declared_parameter_is_classified():
    doors = router_doors()
    assert [n for n in router_names() if not doors.classified(n)] == []
    assert [n for n in executor_names() if not EXECUTOR_DOORS.classified(n)] == []
    # and every field of the models by its top-level name (a new field must be classified)
    assert set(ExecutorConfig.model_fields) | ROS_OWN | {'autostart'} == EXECUTOR_FIXED
    assert {n.split('.')[0] for n in router_names()} <= doors.fixed | doors.writable


def test_only_the_harmless_ones_are_writable():
    doors = router_doors()
    assert [n for n in router_names() if doors.is_writable(n)] == ['diagnostics_period_s']
    assert [n for n in executor_names() if EXECUTOR_DOORS.is_writable(n)] == []
    assert not doors.writable & ROUTER_FIXED


@pytest.mark.parametrize('node, name', [(n, p) for n, ps in ATTACKED.items() for p in ps])
def test_what_the_attacker_changed_is_refused_with_the_way_to_change_it(node, name):
    doors = router_doors() if node == 'router_node' else EXECUTOR_DOORS
    reason = doors.refusal([name])
    assert reason.startswith(f'{name} is fixed at start on {node}') and RESTART in reason


def test_a_name_in_no_table_is_refused_and_a_mixed_change_is_refused_whole():
    doors = router_doors()
    assert 'not in its table' in doors.refusal(['brand_new'])
    assert doors.refusal(['diagnostics_period_s']) == ''
    assert doors.refusal(['diagnostics_period_s', 'policy']).startswith('policy is fixed')


def test_policy_sections_of_an_extended_registry_are_fixed():
    from pydantic import BaseModel

    from tool_router.routing.policies.registry import REGISTRY, PolicySpec

    class KeywordParams(BaseModel):
        min_length: int = 3

    registry = REGISTRY.with_policies(PolicySpec('keyword', 'x:build', KeywordParams))
    doors = router_doors(registry)
    assert doors.classified('keyword.min_length') and not doors.is_writable('keyword.min_length')


def test_unknown_names_get_a_close_match():
    known = executor_names()
    assert unknown_names(['mode', 'moda', 'bindings.my_tool', 'use_sim_time'], known,
                         {'bindings'}) == ['moda']
    problem = unknown_problem('executor_node', ['moda', 'zzz'], known)
    assert "'moda' (did you mean 'mode'?)" in problem and "'zzz'" in problem
    assert "'zzz' (did you mean" not in problem


def test_the_executor_refuses_an_unknown_name_and_adds_a_custom_binding():
    declared = _flat(load_executor_config().model_dump(mode='json'))
    with pytest.raises(ConfigError, match=r"'mdoe' \(did you mean 'mode'\?\)"):
        start_parameters(declared, ['mdoe', 'trace_dir'])
    with pytest.raises(ConfigError, match=r"'redact.enabld' \(did you mean 'redact.enabled'"):
        start_parameters(declared, ['redact.enabld'])
    names = start_parameters(declared, ['bindings.my_tool', 'use_sim_time', 'mode'])
    assert names == declared + ['bindings.my_tool']


# -- real processes -----------------------------------------------------------------------

def run_executor_to_exit(tmp_path: Path, *args: str):
    from procs import NodeProcess
    proc = NodeProcess('tool_router.ros.executor_node', '-p', f'trace_dir:={tmp_path}', *args,
                       env={'ROS_HOME': str(tmp_path / 'home')})
    try:
        proc.proc.wait(timeout=120)  # an event wait: start-up time varies with load
    finally:
        proc.stop()
    return proc


@pytest.mark.slow
def test_the_executor_exits_on_an_unknown_parameter(tmp_path):
    proc = run_executor_to_exit(tmp_path, '-p', 'moda:=shadow')
    assert proc.proc.returncode == 1
    fatal = [line for line in proc.lines if 'cannot start' in line]
    assert len(fatal) == 1 and "unknown parameter 'moda' (did you mean 'mode'?)" in fatal[0]
    assert 'executor ready' not in proc.output and 'Traceback' not in proc.output
    assert 'mode execute' not in proc.output


@pytest.mark.slow
def test_the_executor_exits_on_an_unknown_name_in_a_params_file(tmp_path):
    params = tmp_path / 'executor.yaml'
    params.write_text('executor_node:\n  ros__parameters:\n    mdoe: shadow\n')
    proc = run_executor_to_exit(tmp_path, '--params-file', str(params))
    assert proc.proc.returncode == 1
    fatal = [line for line in proc.lines if 'cannot start' in line]
    assert len(fatal) == 1 and "unknown parameter 'mdoe' (did you mean 'mode'?)" in fatal[0]
    assert 'executor ready' not in proc.output and 'Traceback' not in proc.output


@pytest.mark.slow
def test_the_router_names_an_unknown_parameter_and_its_close_match(tmp_path):
    from procs import NodeProcess
    proc = NodeProcess('tool_router.ros.router_node', '-p', 'polcy:=cdbv2',
                       '-p', 'chroma_ephemeral:=true', env={'ROS_HOME': str(tmp_path)})
    try:
        proc.proc.wait(timeout=180)  # an event wait: start-up time varies with load
    finally:
        proc.stop()
    assert proc.proc.returncode == 1
    assert "unknown parameter 'polcy' (did you mean 'policy'?)" in proc.output
    assert 'not serving' in proc.output and 'Traceback' not in proc.output


def _table(report: dict) -> str:
    """The measured table of docs/SECURITY.md: one row per parameter and node."""
    rows = ['| node | parameter | read-only descriptor | set | delete | set atomically |',
            '|---|---|---|---|---|---|']
    for node, result in report.items():
        for name, r in sorted(result['parameters'].items()):
            rows.append(f"| {node} | `{name}` | {'yes' if r['read_only'] else 'no'} | "
                        f"{'ACCEPTED' if r['set'] else 'refused'} | "
                        f"{'ACCEPTED' if r['delete'] else 'refused'} | "
                        f"{'ACCEPTED' if r['atomic'] else 'refused'} |")
    return '\n'.join(rows)


@pytest.mark.slow
def test_a_keyless_process_can_set_only_the_harmless_parameters(tmp_path):
    from procs import NodeProcess
    vehicle = {'ROS_HOME': str(tmp_path / 'vehicle')}
    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true',
                         env=vehicle)
    executor = NodeProcess('tool_router.ros.executor_node',
                           '-p', f'trace_dir:={tmp_path / "traces"}', env=vehicle)
    attacker_home = tmp_path / 'attacker'
    attacker_home.mkdir()
    try:
        assert executor.wait_for('executor ready', 240), executor.output[-3000:]
        assert router.wait_for('serving /route_request', 240), router.output[-3000:]
        out = subprocess.run(
            [sys.executable, str(HERE / 'param_attacker.py'), '/router_node', '/executor_node'],
            capture_output=True, text=True, timeout=1800,
            env={**os.environ, 'ROS_HOME': str(attacker_home)})
        assert out.returncode == 0, out.stderr[-3000:]
        report = json.loads(out.stdout.strip().splitlines()[-1])
        (tmp_path / 'table.md').write_text(_table(report) + '\n')
        (tmp_path / 'report.json').write_text(json.dumps(report, indent=1, sort_keys=True))
        print(_table(report))  # the table of docs/SECURITY.md
    finally:
        codes = [p.stop() for p in (executor, router)]
    assert codes == [0, 0], (router.output[-2000:], executor.output[-2000:])
    assert not (attacker_home / 'tool_router').exists()  # the attacker held no key

    writable = {'/router_node': {'diagnostics_period_s'}, '/executor_node': set()}
    expected = {'/router_node': set(router_names()), '/executor_node': set(executor_names())}
    for node, result in report.items():
        params = result['parameters']
        # every declared parameter was listed (bindings of all 42 tools, policy sections ...)
        assert set(params) == expected[node], set(params) ^ expected[node]
        assert {n for n, r in params.items() if r['set']} == writable[node]
        assert {n for n, r in params.items() if r['atomic']} == writable[node]
        assert not [n for n, r in params.items() if r['delete']]
        for name, r in params.items():
            if name in writable[node]:
                assert not r['read_only']
                continue
            # refused by the doors, not by chance: rclpy's read-only check or our callback
            assert r['read_only'] or RESTART in r['reason'], (node, name, r)
            if r['read_only'] and name != 'start_type_description_service':  # rclpy's own
                assert RESTART in r['constraints'], (node, name, r)
            assert ('read-only' in r['reason'] or RESTART in r['reason']), (node, name, r)
        assert set(result['unchanged']) == set(params) - writable[node]
        assert not result['undeclared_set']
    # rclpy declares use_sim_time without a read-only descriptor: our callback refused it
    sim_time = report['/executor_node']['parameters']['use_sim_time']
    assert not sim_time['read_only'] and RESTART in sim_time['reason']
