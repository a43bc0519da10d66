"""The executor refuses to start on a bad permissions file or bad parameters."""
from __future__ import annotations

import pytest
from procs import NodeProcess

pytestmark = pytest.mark.slow  # starts ROS or server processes


def run_to_exit(*args: str) -> NodeProcess:
    proc = NodeProcess('tool_router.nodes.executor_node', *args)
    try:
        proc.proc.wait(timeout=30)
    finally:
        proc.stop()
    return proc


@pytest.mark.parametrize('text, expected', [
    ('version: 1\ndefaults:\n  none: allow\n  critical: confirmm\n',
     ':4: field defaults.critical'),
    ('version: 1\ntools:\n  arm_motor: allow\n', ':3: field tools.arm_motor: unknown tool'),
])
def test_bad_permissions_file_stops_the_node(tmp_path, text, expected):
    path = tmp_path / 'perms.yaml'
    path.write_text(text)
    proc = run_to_exit('-p', f'permissions_file:={path}', '-p', f'trace_dir:={tmp_path}')
    assert proc.proc.returncode == 1
    assert 'cannot start' in proc.output and f'{path}{expected}' in proc.output
    assert 'executor ready' not in proc.output


def test_bad_parameter_stops_the_node(tmp_path):
    proc = run_to_exit('-p', 'mode:=yolo', '-p', f'trace_dir:={tmp_path}')
    assert proc.proc.returncode == 1
    assert 'cannot start: parameter mode' in proc.output
