"""The ``tool-router`` command line as a new user meets it (no model, no ROS: fast tier)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest
from procs import ROOT

from tool_router.cli.main import build_parser, main
from tool_router.cli.core import serve_processes
from tool_router.cli.completion import bash_script


def cli(*args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen([sys.executable, '-m', 'tool_router.cli', *args], cwd=ROOT, env=env,
                            text=True, **kw)


def all_parsers(parser: argparse.ArgumentParser, path: str = 'tool-router'):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from all_parsers(child, f'{path} {name}')


def test_every_option_and_argument_has_help_text():
    missing = [
        f'{path}: {"/".join(a.option_strings) or a.dest}'
        for path, parser in all_parsers(build_parser())
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        and not (a.help and a.help.strip())
    ]
    assert missing == []


def test_version(capsys):
    from tool_router import __version__

    with pytest.raises(SystemExit) as exit_:
        main(['--version'])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f'tool-router {__version__}'


def serve_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(['serve', *argv])


def test_serve_passes_yaml_valued_parameters_as_parameters():
    args = serve_args('--param', 'catalog:=/path/x.yaml', '--config', '/etc/router.yaml',
                      '--executor-param', 'permissions_file:=/p/perm.yaml',
                      '--executor-config', '/etc/exec.yaml', '--mode', 'shadow')
    procs = dict(serve_processes(args))
    router, executor = procs['router_node'], procs['executor_node']
    assert router[router.index('--ros-args') + 1:] == [
        '--params-file', '/etc/router.yaml', '-p', 'catalog:=/path/x.yaml']
    assert executor[executor.index('--ros-args') + 1:] == [
        '--params-file', '/etc/exec.yaml', '-p', 'mode:=shadow',
        '-p', 'permissions_file:=/p/perm.yaml']


def test_serve_param_without_assignment_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        serve_args('--param', '/path/x.yaml')
    assert exit_.value.code == 2
    assert 'expected NAME:=VALUE' in capsys.readouterr().err


def test_set_errors_name_the_override_not_the_shipped_file(capsys):
    assert main(['route', 'land', '--set', 'cdbv3.gap=5']) == 2
    err = capsys.readouterr().err
    assert '--set cdbv3.gap=5: parameter cdbv3.gap' in err and 'router.yaml' not in err
    assert main(['route', 'land', '--set', 'polcy=lcr']) == 2
    assert "--set polcy='lcr': parameter polcy: Extra inputs" in capsys.readouterr().err


def test_empty_request_is_refused_before_the_model_loads(capsys, monkeypatch):
    import tool_router.routing.router as router_module

    def no_model(*_a, **_k):
        raise AssertionError('the router (and its model) must not be built for an empty request')
    monkeypatch.setattr(router_module, 'Router', no_model)
    assert main(['route', '   ']) == 2
    assert 'request is empty' in capsys.readouterr().err


def test_plain_route_output_says_why_nothing_was_selected(fake_index, capsys, monkeypatch):
    import tool_router.routing.router as router_module

    real = router_module.Router
    monkeypatch.setattr(router_module, 'Router', lambda config: real(config, index=fake_index))
    assert main(['route', 'zzz qqq', '--policy', 'cdbv1',
                 '--set', 'cdbv1.max_distance=0.001']) == 0
    out = capsys.readouterr().out
    assert out.startswith('(no tool: no tool close enough; closest tool: ')


def test_a_closed_pipe_ends_the_command_quietly(tmp_path):
    from test_trace_records import record

    from tool_router.executor.traces import TraceWriter
    writer = TraceWriter(tmp_path)
    for i in range(200):
        writer.write(record(i))
    writer.close()
    for args in (['trace', 'summary', str(tmp_path), '--json'], ['completion', 'bash']):
        proc = cli(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # the reader is gone before the first write, like `| head -0`
        err = proc.stderr.read()
        proc.stderr.close()
        assert proc.wait(timeout=60) == 141, err
        assert 'Traceback' not in err and 'BrokenPipe' not in err, err


def complete(script: str, line: str) -> list[str]:
    words = line.split(' ')
    program = (f'{script}\nCOMP_WORDS=({" ".join(repr(w) for w in words)}); '
               f'COMP_CWORD={len(words) - 1}; _tool_router; printf "%s\\n" "${{COMPREPLY[@]}}"')
    out = subprocess.run(['bash', '-c', program], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return [w for w in out.stdout.split('\n') if w]


def test_bash_completion_knows_commands_options_and_choices():
    script = bash_script(build_parser())
    assert script.rstrip().endswith('complete -o default -o bashdefault -F _tool_router '
                                    'tool-router')
    assert complete(script, 'tool-router se') == ['serve']
    assert complete(script, 'tool-router serve --executor-') == [
        '--executor-config', '--executor-param']
    assert complete(script, 'tool-router serve --mode ') == ['execute', 'dry_run', 'shadow']
    assert complete(script, 'tool-router dataset ch') == ['check']
    assert complete(script, 'tool-router --v') == ['--version']


def test_dataset_check_reports_and_fixes_unsorted_tool_lists(tmp_path, capsys):
    path = tmp_path / 'd.jsonl'
    lines = [{'id': 'a', 'level': 'consequential', 'request': 'land when low',
              'tools': ['land', 'battery_status'], 'style': 'x'},
             {'id': 'b', 'level': 'direct', 'request': 'land', 'tools': ['land']}]
    path.write_text(''.join(json.dumps(x) + '\n' for x in lines))
    assert main(['dataset', 'check', str(path)]) == 0
    out = capsys.readouterr().out
    assert '1 tool list(s) not in sorted order (lines 1): read as sets; --fix sorts them' in out
    assert json.loads(path.read_text().splitlines()[0])['tools'] == ['land', 'battery_status']
    assert main(['dataset', 'check', '--fix', str(path)]) == 0
    assert 'rewritten sorted' in capsys.readouterr().out
    first, second = path.read_text().splitlines()
    assert json.loads(first) == {**lines[0], 'tools': ['battery_status', 'land']}
    assert list(json.loads(first)) == ['id', 'level', 'request', 'tools', 'style']
    assert second == json.dumps(lines[1])
    assert main(['dataset', 'check', str(path)]) == 0
    assert 'not in sorted order' not in capsys.readouterr().out


def test_dataset_check_suggests_the_closest_name(tmp_path, capsys):
    path = tmp_path / 'd.jsonl'
    path.write_text(json.dumps({'id': 'a', 'level': 'drect', 'request': 'x', 'tools': []}) + '\n')
    assert main(['dataset', 'check', str(path)]) == 2
    assert "unknown level 'drect' (did you mean direct?)" in capsys.readouterr().err
    path.write_text(json.dumps({'id': 'a', 'level': 'direct', 'request': 'photo',
                                'tools': ['rgb_camra']}) + '\n')
    assert main(['dataset', 'check', str(path)]) == 2
    assert 'rgb_camra (did you mean rgb_camera?)' in capsys.readouterr().err
