"""The executor refuses to start on a bad permissions file or bad parameters."""
from __future__ import annotations

import pytest
from procs import ROOT, NodeProcess

pytestmark = pytest.mark.slow  # starts ROS or server processes


def run_to_exit(*args: str) -> NodeProcess:
    proc = NodeProcess('tool_router.ros.executor_node', *args)
    try:
        proc.proc.wait(timeout=120)  # an event wait: start-up time varies with load
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
    assert 'Traceback' not in proc.output


def test_bad_parameter_stops_the_node(tmp_path):
    proc = run_to_exit('-p', 'mode:=yolo', '-p', f'trace_dir:={tmp_path}')
    assert proc.proc.returncode == 1
    assert 'cannot start: parameter mode' in proc.output
    assert 'Traceback' not in proc.output


def test_unopenable_mavlink_link_stops_the_node(tmp_path):
    """A link that cannot be opened (192.0.2.1 is not ours to bind) fails like bad input."""
    params = ROOT / 'config' / 'executor_mavlink.yaml'
    proc = run_to_exit('--params-file', str(params), '-p', f'trace_dir:={tmp_path}',
                       '-p', 'mavlink.connection:=udpin:192.0.2.1:14550')
    assert proc.proc.returncode == 1
    assert 'cannot start: MAVLink udpin:192.0.2.1:14550' in proc.output
    assert 'Traceback' not in proc.output
    assert 'executor ready' not in proc.output
