"""ROS 2 glue: thin nodes that convert messages and delegate to the pure core."""
