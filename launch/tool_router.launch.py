"""Bring up the tool router, the executor and (optionally) the simulated vehicle.

    ros2 launch tool_router tool_router.launch.py [params_file:=...] [autostart:=true]
        [executor_params_file:=...] [mode:=execute|dry_run|shadow] [sim:=true]
        [enclave_prefix:=/tool_router] [namespace:=uav1] [use_sim_time:=false] [log_level:=info]

Each node runs in its SROS2 enclave <enclave_prefix>/{router,executor,vehicle}
(config/sros2/policy.xml); without ROS_SECURITY_ENABLE=true the enclave is not used.

Every name the nodes use is relative, so ``namespace:=uav1`` moves all of them
(/uav1/route_request, /uav1/executor/..., /uav1/sim/...): one launch per vehicle.
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory('tool_router'))
    params = LaunchConfiguration('params_file')
    executor_params = LaunchConfiguration('executor_params_file')
    prefix = LaunchConfiguration('enclave_prefix')
    namespace = LaunchConfiguration('namespace')
    sim_time = {'use_sim_time': LaunchConfiguration('use_sim_time')}
    logging = ['--log-level', LaunchConfiguration('log_level')]
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
                              description='configure and activate the router without a '
                                          'lifecycle manager'),
        DeclareLaunchArgument('executor_params_file',
                              default_value=str(share / 'config' / 'executor.yaml'),
                              description='executor parameters file (mode, bindings, traces)'),
        DeclareLaunchArgument('mode', default_value='execute',
                              description='executor mode: execute, dry_run or shadow'),
        DeclareLaunchArgument('sim', default_value='false',
                              description='also start the simulated vehicle (sim_vehicle)'),
        DeclareLaunchArgument('enclave_prefix', default_value='/tool_router',
                              description='SROS2 enclaves <prefix>/router, /executor, /vehicle '
                                          '(used only with ROS_SECURITY_ENABLE=true)'),
        LifecycleNode(
            package='tool_router', executable='router_node', name='router_node',
            namespace=namespace, output='screen',
            ros_arguments=[*logging, '--enclave', [prefix, '/router']],
            parameters=[params, {'autostart': LaunchConfiguration('autostart')}, sim_time],
        ),
        Node(
            package='tool_router', executable='executor_node', name='executor_node',
            namespace=namespace, output='screen',
            ros_arguments=[*logging, '--enclave', [prefix, '/executor']],
            parameters=[executor_params, {'mode': LaunchConfiguration('mode')}, sim_time],
        ),
        Node(
            package='tool_router', executable='sim_vehicle', name='sim_vehicle',
            namespace=namespace, output='screen', parameters=[sim_time],
            ros_arguments=[*logging, '--enclave', [prefix, '/vehicle']],
            condition=IfCondition(LaunchConfiguration('sim')),
        ),
    ])
