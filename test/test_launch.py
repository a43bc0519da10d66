"""launch_testing test of launch/tool_router.launch.py, for ROS 2 installs.

`launch`, `launch_ros` and `launch_testing` are not on PyPI, so this module is
skipped where they are missing; the same behaviour (router starts, serves
/route_request, exits cleanly) is covered here by test_router_node.py, which
starts the node as a process. The launch file in a namespace: test_launch_namespace.py
(ROS installs) and, with real node processes, test_params_files.py / test_namespaces.py.
"""

import os
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip(
    'launch_testing', reason='launch_testing is not installed (ROS 2 install only)'
)
pytest.importorskip('launch_ros', reason='launch_ros is not installed (ROS 2 install only)')

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402,F811 - the submodule of the module imported above
import launch_testing.asserts  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402

pytestmark = pytest.mark.slow  # starts ROS or server processes

LAUNCH_FILE = Path(__file__).resolve().parent.parent / 'launch' / 'tool_router.launch.py'


@pytest.mark.launch_test
def generate_test_description():
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    included = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE))
    )
    return launch.LaunchDescription([included, launch_testing.actions.ReadyToTest()])


class TestRouterComesUp(unittest.TestCase):
    def test_router_serves(self, proc_output):
        proc_output.assertWaitFor('serving /route_request', timeout=180, stream='stderr')


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
