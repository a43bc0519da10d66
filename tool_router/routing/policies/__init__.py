"""Routing policies: pure functions of a request and the catalog index, no rclpy."""
