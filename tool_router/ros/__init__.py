"""ROS 2 glue: thin nodes that convert messages and delegate to the pure core.

Also the short-lived session the command line uses, QoS profiles and private ROS domains for tests.
"""
