"""launch_testing test of launch/tool_router.launch.py in a namespace, for ROS 2 installs.

`launch`, `launch_ros` and `launch_testing` are not on PyPI, so this module is skipped where
they are missing; the same behaviour (parameters files applied under the namespace, the
executor's mode from its file unless ``mode:=`` is given) is covered by test_params_files.py,
which starts the executor as a process with the launch file's arguments
(tool_router.common.params_files.launch_parameters), and by test_namespaces.py.
"""

import os
import tempfile
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

pytestmark = pytest.mark.slow  # starts ROS processes

LAUNCH_FILE = Path(__file__).resolve().parent.parent / 'launch' / 'tool_router.launch.py'


@pytest.mark.launch_test
def generate_test_description():
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    work = Path(tempfile.mkdtemp(prefix='tool_router_launch_ns_'))
    executor_file = work / 'executor_shadow.yaml'  # a plain `executor_node:` key, as shipped
    executor_file.write_text('executor_node:\n  ros__parameters:\n    mode: shadow\n'
                             f'    trace_dir: {work / "traces"}\n')
    included = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
        launch_arguments={'namespace': 'uav3', 'executor_params_file': str(executor_file),
                          'sim': 'true'}.items(),
    )
    return launch.LaunchDescription([included, launch_testing.actions.ReadyToTest()])


class TestNamespacedStack(unittest.TestCase):
    def test_executor_reads_its_file_under_the_namespace(self, proc_output):
        # no mode:= given: the file's shadow holds (the old default 'execute' overrode it)
        proc_output.assertWaitFor('executor ready: mode shadow', timeout=120, stream='stderr')

    def test_router_serves_in_the_namespace(self, proc_output):
        proc_output.assertWaitFor('serving /uav3/route_request', timeout=240, stream='stderr')


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
