"""The executor wing (pure, no rclpy): what happens to a routed selection.

Intake, permissions, confirmations, dispatch, watches, traces and the MAVLink backend.

It imports :mod:`tool_router.common`, never the routing wing; the node that wires it to ROS is
:mod:`tool_router.ros.executor_node`, its command line :mod:`tool_router.cli.executor`.
"""
