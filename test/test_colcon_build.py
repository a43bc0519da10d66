"""Build way (b): `colcon build` of this checkout in a ROS 2 workspace, against the PyPI wheels."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts ROS or server processes


ROOT = Path(__file__).resolve().parent.parent


def test_colcon_builds_the_package_and_its_interfaces(tmp_path):
    venv = Path(sys.prefix)
    colcon = shutil.which('colcon') or str(venv / 'bin' / 'colcon')
    assert Path(colcon).exists(), 'colcon is installed by scripts/setup.sh'
    ws = tmp_path / 'ws'
    (ws / 'src').mkdir(parents=True)
    # A workspace holds a copy of the checkout, as a user's `src/tool_router` would.
    shutil.copytree(
        ROOT,
        ws / 'src' / 'tool_router',
        ignore=shutil.ignore_patterns(
            '.venv',
            'build',
            'install',
            'log',
            '.git',
            '__pycache__',
            '.pytest_cache',
            'benchmarks',
        ),
    )
    env = {
        **os.environ,
        'AMENT_PREFIX_PATH': str(venv),
        'CMAKE_PREFIX_PATH': str(venv),
        'PATH': f'{venv / "bin"}{os.pathsep}{os.environ["PATH"]}',
    }
    build = subprocess.run(
        [
            colcon,
            'build',
            '--cmake-args',
            f'-DPython3_EXECUTABLE={sys.executable}',
            '-DBUILD_TESTING=OFF',
            '--event-handlers',
            'console_direct-',
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    site = next((ws / 'install' / 'tool_router' / 'lib').glob('python3*/site-packages'))
    for path in (
        'tool_router/srv/_route_request.py',
        'tool_router/msg/_selected_capabilities.py',
        'tool_router/routing/router.py',
        'tool_router/ros/router_node.py',
    ):
        assert (site / path).exists(), path
    assert (ws / 'install' / 'tool_router' / 'lib' / 'tool_router' / 'router_node').exists()
    assert (
        ws / 'install' / 'tool_router' / 'share' / 'tool_router' / 'config' / 'router.yaml'
    ).exists()
    assert (
        ws
        / 'install'
        / 'tool_router'
        / 'share'
        / 'tool_router'
        / 'launch'
        / 'tool_router.launch.py'
    ).exists()
    # The installed package imports from the workspace install, interfaces and node code alike.
    probe = (
        'import tool_router, tool_router.srv, tool_router.ros.router_node as n; '
        'from tool_router.srv import RouteRequest; print(tool_router.__file__)'
    )
    run_env = {
        **env,
        'PYTHONPATH': str(site),
        'LD_LIBRARY_PATH': os.pathsep.join(
            [str(ws / 'install' / 'tool_router' / 'lib'), env.get('LD_LIBRARY_PATH', '')]),
    }
    out = subprocess.run(
        [sys.executable, '-c', probe],
        cwd=tmp_path,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert str(site) in out.stdout
