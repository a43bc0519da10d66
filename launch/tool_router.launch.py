"""Bring up the tool router, the executor and (optionally) the simulated vehicle.

    ros2 launch tool_router tool_router.launch.py [params_file:=...] [autostart:=true]
        [executor_params_file:=...] [mode:=execute|dry_run|shadow] [sim:=true]
        [enclave_prefix:=/tool_router] [namespace:=uav1] [use_sim_time:=false] [log_level:=info]

Each node runs in its SROS2 enclave <enclave_prefix>/{router,executor,vehicle}
(config/sros2/policy.xml); without ROS_SECURITY_ENABLE=true the enclave is not used.

Every name the nodes use is relative, so ``namespace:=uav1`` moves all of them
(/uav1/route_request, /uav1/executor/..., /uav1/sim/...): one launch per vehicle. The
parameters files are checked and, in a namespace, given to the nodes with their node keys
rewritten to the fully qualified names (``router_node:`` -> ``/uav1/router_node:``;
tool_router/common/params_files.py, the same code as ``tool-router serve --namespace``): a key
that matches no node started stops the launch with one error naming the file. ``mode`` is
passed to the executor only when given; otherwise the executor parameters file decides.
"""
from pathlib import Path
from typing import Any

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.launch_context import LaunchContext
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node

from tool_router.common.params_files import launch_parameters

ARGUMENTS = ('namespace', 'use_sim_time', 'log_level', 'params_file', 'autostart',
             'executor_params_file', 'mode', 'sim', 'enclave_prefix')


def _nodes(context: LaunchContext) -> list[Any]:
    """The nodes, their parameters files checked (and rewritten in a namespace)."""
    args = {name: str(LaunchConfiguration(name).perform(context)) for name in ARGUMENTS}
    parameters = launch_parameters(args)  # the same code as `tool-router serve --namespace`
    namespace, prefix = args['namespace'], args['enclave_prefix']
    logging = ['--log-level', args['log_level']]
    nodes: list[Any] = [
        LifecycleNode(
            package='tool_router', executable='router_node', name='router_node',
            namespace=namespace, output='screen',
            ros_arguments=[*logging, '--enclave', f'{prefix}/router'],
            parameters=parameters['router_node'],
        ),
        LifecycleNode(
            package='tool_router', executable='executor_node', name='executor_node',
            namespace=namespace, output='screen',
            ros_arguments=[*logging, '--enclave', f'{prefix}/executor'],
            parameters=parameters['executor_node'],
        ),
    ]
    if 'sim_vehicle' in parameters:
        nodes.append(Node(
            package='tool_router', executable='sim_vehicle', name='sim_vehicle',
            namespace=namespace, output='screen', parameters=parameters['sim_vehicle'],
            ros_arguments=[*logging, '--enclave', f'{prefix}/vehicle'],
        ))
    return nodes


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory('tool_router'))
    return LaunchDescription([
        DeclareLaunchArgument('namespace', default_value='',
                              description='namespace of every node, topic and service '
                                          '(one per vehicle, e.g. uav1)'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use /clock instead of the wall clock'),
        DeclareLaunchArgument('log_level', default_value='info',
                              description='debug, info, warn, error or fatal'),
        DeclareLaunchArgument('params_file', default_value=str(share / 'config' / 'router.yaml'),
                              description='router parameters file'),
        DeclareLaunchArgument('autostart', default_value='true',
                              description='configure and activate the router and the '
                                          'executor without a lifecycle manager'),
        DeclareLaunchArgument('executor_params_file',
                              default_value=str(share / 'config' / 'executor.yaml'),
                              description='executor parameters file (mode, bindings, traces)'),
        DeclareLaunchArgument('mode', default_value='',
                              description="executor mode: execute, dry_run or shadow ('' = "
                                          "the executor parameters file's mode)"),
        DeclareLaunchArgument('sim', default_value='false',
                              description='also start the simulated vehicle (sim_vehicle)'),
        DeclareLaunchArgument('enclave_prefix', default_value='/tool_router',
                              description='SROS2 enclaves <prefix>/router, /executor, /vehicle '
                                          '(used only with ROS_SECURITY_ENABLE=true)'),
        OpaqueFunction(function=_nodes),
    ])
