"""The executor: permissions, confirmations, dispatch and traces for routed tool selections.

Everything in this package is pure Python (no rclpy) except :mod:`ros_client`,
the small ROS binding used by the command line. The node that wires it to ROS
is :mod:`tool_router.nodes.executor_node`.
"""
