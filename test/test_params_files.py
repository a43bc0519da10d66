"""Parameters files under a namespace (tool_router/common/params_files.py), and `serve` checks.

ROS matches a parameters file's top-level key against the node's fully qualified name: the
shipped files' ``router_node:`` / ``executor_node:`` reach no node in ``/uav3``. `serve
--namespace` and the launch file rewrite those keys; a key that matches no node started, or a
file with no key for its node, is one error line, never silence. The real-process side
(an executor in /uav3 reading its mode from the rewritten file) is in test_namespaces.py.
"""
from __future__ import annotations

import json

import yaml

import pytest

from tool_router.cli.main import main
from tool_router.common.errors import ConfigError
from tool_router.common.params_files import (key_matches, launch_parameters,
                                             prepare_params_file)
from tool_router.common.paths import config_path

BOTH = ['router_node', 'executor_node']


@pytest.mark.parametrize('name, node', [('router.yaml', 'router_node'),
                                        ('executor.yaml', 'executor_node'),
                                        ('executor_mavlink.yaml', 'executor_node')])
def test_shipped_files_get_fully_qualified_keys_in_a_namespace(tmp_path, name, node):
    shipped = config_path(name)
    out = prepare_params_file(shipped, node, 'uav3', BOTH, tmp_path)
    rewritten = yaml.safe_load(open(out))
    original = yaml.safe_load(shipped.read_text())
    assert list(rewritten) == [f'/uav3/{node}']
    assert rewritten[f'/uav3/{node}'] == original[node]  # every value kept
    # nested namespaces too; in the root namespace the shipped file is given as it is
    assert list(yaml.safe_load(open(prepare_params_file(
        shipped, node, '/fleet/uav3/', BOTH, tmp_path)))) == [f'/fleet/uav3/{node}']
    assert prepare_params_file(shipped, node, '', BOTH, tmp_path) == str(shipped)


def test_key_matching_follows_ros():
    assert key_matches('/**', '/uav3/executor_node')
    assert key_matches('executor_node', '/executor_node')
    assert not key_matches('executor_node', '/uav3/executor_node')  # the dropped-file bug
    assert key_matches('/uav3/*', '/uav3/executor_node')
    assert not key_matches('/*/executor_node', '/a/b/executor_node')
    assert key_matches('/**/executor_node', '/a/b/executor_node')


def test_wildcard_and_qualified_keys_are_kept(tmp_path):
    path = tmp_path / 'p.yaml'
    path.write_text('/**:\n  ros__parameters: {mode: shadow}\n'
                    '/uav3/executor_node:\n  ros__parameters: {max_queue: 3}\n')
    out = yaml.safe_load(open(prepare_params_file(path, 'executor_node', 'uav3', BOTH, tmp_path)))
    assert list(out) == ['/**', '/uav3/executor_node']


def test_a_key_that_matches_no_node_started_is_an_error(tmp_path):
    path = tmp_path / 'typo.yaml'
    path.write_text('executor_node:\n  ros__parameters: {mode: shadow}\n'
                    'excutor_node:\n  ros__parameters: {mode: shadow}\n')
    with pytest.raises(ConfigError, match=r"typo.yaml: node key 'excutor_node' \(as "
                                          r"/uav3/excutor_node\) matches no node started"):
        prepare_params_file(path, 'executor_node', 'uav3', BOTH, tmp_path)
    other = tmp_path / 'other.yaml'  # qualified for another vehicle: ignored by ROS, so refused
    other.write_text('/uav1/executor_node:\n  ros__parameters: {mode: shadow}\n')
    with pytest.raises(ConfigError, match='matches no node started'):
        prepare_params_file(other, 'executor_node', 'uav3', BOTH, tmp_path)


def test_the_file_of_another_node_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r'router.yaml: no node key applies to '
                                          r'/uav3/executor_node \(keys: router_node\)'):
        prepare_params_file(config_path('router.yaml'), 'executor_node', 'uav3', BOTH, tmp_path)
    with pytest.raises(ConfigError, match='no node key applies to /executor_node'):
        prepare_params_file(config_path('router.yaml'), 'executor_node', '', BOTH, tmp_path)


def test_serve_checks_every_file_first_one_line_and_exit_2(tmp_path, capsys):
    missing = tmp_path / 'nope.yaml'
    bad_key = tmp_path / 'bad.yaml'
    bad_key.write_text('excutor_node:\n  ros__parameters: {mode: shadow}\n')
    bad_yaml = tmp_path / 'broken.yaml'
    bad_yaml.write_text('executor_node:\n  ros__parameters: [\n')
    no_catalog = tmp_path / 'cat.yaml'
    no_catalog.write_text(f'executor_node:\n  ros__parameters:\n    catalog: {tmp_path}/x.yaml\n')
    cases = [
        (['--executor-config', str(missing)], f'{missing}: no such parameters file'),
        (['--config', str(missing)], f'{missing}: no such parameters file'),
        (['--namespace', 'uav3', '--executor-config', str(bad_key)],
         "node key 'excutor_node' (as /uav3/excutor_node) matches no node started"),
        (['--executor-config', str(bad_yaml)], f'{bad_yaml}:3: invalid YAML'),
        (['--executor-config', str(no_catalog)], f'parameter catalog: no such file {tmp_path}'),
        (['--param', f'catalog:={missing}'], '--param: parameter catalog: no such file'),
        (['--namespace', 'uav3', '--config', str(config_path('executor.yaml'))],
         'no node key applies to /uav3/router_node'),
    ]
    for argv, expected in cases:
        assert main(['serve', *argv]) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == ''  # nothing was started ("starting ..." lines)
        lines = captured.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith('tool-router: error: '), captured.err
        assert expected in lines[0], (argv, lines)


def as_ros_args(parameters) -> list[str]:
    """A launch ``parameters`` list as node arguments: the file, then ``-p`` per override."""
    out: list[str] = []
    for item in parameters:
        if isinstance(item, str):
            out += ['--params-file', item]
        else:
            out += [a for k, v in item.items() for a in ('-p', f'{k}:={json.dumps(v)}')]
    return out


def test_launch_parameters_give_the_mode_only_when_asked(tmp_path):
    shadow = tmp_path / 'shadow.yaml'
    shadow.write_text('executor_node:\n  ros__parameters: {mode: shadow}\n')
    args = {'namespace': 'uav3', 'params_file': str(config_path('router.yaml')),
            'executor_params_file': str(shadow), 'mode': '', 'sim': 'true',
            'use_sim_time': 'false', 'autostart': 'true'}
    nodes = launch_parameters(args, tmp_path)
    assert sorted(nodes) == ['executor_node', 'router_node', 'sim_vehicle']
    assert nodes['executor_node'][1:] == [{'autostart': True}, {'use_sim_time': False}]  # no mode
    assert nodes['router_node'][1:] == [{'autostart': True}, {'use_sim_time': False}]
    assert list(yaml.safe_load(open(nodes['executor_node'][0]))) == ['/uav3/executor_node']
    asked = launch_parameters({**args, 'mode': 'dry_run', 'sim': 'false'}, tmp_path)
    assert asked['executor_node'][1:] == [{'mode': 'dry_run'}, {'autostart': True},
                                          {'use_sim_time': False}]
    assert 'sim_vehicle' not in asked
    with pytest.raises(ConfigError, match='no node key applies to /uav3/router_node'):
        launch_parameters({**args, 'params_file': str(shadow)}, tmp_path)


@pytest.mark.slow  # starts ROS processes
def test_an_executor_started_as_the_launch_file_starts_it_reads_its_files_mode(tmp_path):
    """launch_ros is not installable here (test_launch.py runs on ROS installs): the executor
    is started with the arguments the launch file gives it, in /uav3."""
    from procs import NodeProcess
    shadow = tmp_path / 'shadow.yaml'
    shadow.write_text('executor_node:\n  ros__parameters:\n    mode: shadow\n'
                      f'    trace_dir: {tmp_path / "traces"}\n')
    args = {'namespace': 'uav3', 'params_file': str(config_path('router.yaml')),
            'executor_params_file': str(shadow), 'mode': ''}
    for mode, expected in (('', 'mode shadow'), ('dry_run', 'mode dry_run')):
        parameters = launch_parameters({**args, 'mode': mode}, tmp_path)['executor_node']
        proc = NodeProcess('tool_router.ros.executor_node', '-r', '__ns:=/uav3',
                           *as_ros_args(parameters))
        try:
            assert proc.wait_for('executor ready', 120), proc.output
            assert f'executor ready: {expected},' in proc.output, proc.output
            assert '[uav3.executor_node]' in proc.output
        finally:
            assert proc.stop() == 0, proc.output


@pytest.mark.slow  # starts ROS processes (serve: router, executor)
def test_serve_in_a_namespace_applies_the_executor_file(tmp_path):
    """`tool-router serve --namespace uav3 --executor-config FILE` as a user runs it: the
    executor in /uav3 reads FILE's plain ``executor_node:`` key, and the rewritten copy goes
    with serve."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    from procs import ROOT, kill_group, wait_until
    shadow = tmp_path / 'shadow.yaml'
    shadow.write_text('executor_node:\n  ros__parameters:\n    mode: shadow\n'
                      f'    trace_dir: {tmp_path / "traces"}\n')
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'PYTHONUNBUFFERED': '1',
           'ROS_HOME': str(tmp_path / 'home')}
    serve = subprocess.Popen([sys.executable, '-m', 'tool_router.cli', 'serve', '--namespace',
                              'uav3', '--executor-config', str(shadow),
                              '--param', 'chroma_ephemeral:=true'],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env, cwd=ROOT, start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(serve.stdout), daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: any('executor ready' in line for line in lines), 120), lines
        ready = next(line for line in lines if 'executor ready' in line)
        assert '[uav3.executor_node]' in ready and 'mode shadow' in ready, ready
        starting = next(line for line in lines if line.startswith('starting executor_node'))
        copy = starting.split('--params-file ')[1].split()[0]
        assert copy != str(shadow) and open(copy).read().count('/uav3/executor_node:') == 1
    finally:
        os.killpg(serve.pid, signal.SIGINT)  # serve stops its children
        try:
            code = serve.wait(timeout=30)
        finally:
            kill_group(serve.pid)
        reader.join(timeout=5)
    assert code == 0, lines[-20:]
    assert not os.path.exists(copy)  # serve's temporary directory went with it
