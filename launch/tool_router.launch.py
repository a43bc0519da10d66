"""Bring up the tool router, the executor and (optionally) the simulated vehicle.

    ros2 launch tool_router tool_router.launch.py [params_file:=...] [autostart:=true]
        [executor_params_file:=...] [mode:=execute|dry_run|shadow] [sim:=true]
        [enclave_prefix:=/tool_router]

Each node runs in its SROS2 enclave <enclave_prefix>/{router,executor,vehicle}
(config/sros2/policy.xml); without ROS_SECURITY_ENABLE=true the enclave is not used.
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
    return LaunchDescription([
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
            package='tool_router', executable='router_node', name='router_node', namespace='',
            output='screen', parameters=[params, {'autostart': LaunchConfiguration('autostart')}],
            ros_arguments=['--enclave', [prefix, '/router']],
        ),
        Node(
            package='tool_router', executable='executor_node', name='executor_node',
            output='screen', parameters=[executor_params, {'mode': LaunchConfiguration('mode')}],
            ros_arguments=['--enclave', [prefix, '/executor']],
        ),
        Node(
            package='tool_router', executable='sim_vehicle', name='sim_vehicle',
            output='screen', condition=IfCondition(LaunchConfiguration('sim')),
            ros_arguments=['--enclave', [prefix, '/vehicle']],
        ),
    ])
