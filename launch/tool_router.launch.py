"""Bring up the tool router on a ROS 2 install.

    ros2 launch tool_router tool_router.launch.py [params_file:=...] [autostart:=true]
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory('tool_router'))
    params = LaunchConfiguration('params_file')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=str(share / 'config' / 'router.yaml'),
                              description='router parameters file'),
        DeclareLaunchArgument('autostart', default_value='true',
                              description='configure and activate the router without a lifecycle manager'),
        LifecycleNode(
            package='tool_router', executable='router_node', name='router_node', namespace='',
            output='screen', parameters=[params, {'autostart': LaunchConfiguration('autostart')}],
        ),
    ])
