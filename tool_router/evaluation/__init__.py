"""Evaluation tooling: datasets, metrics, reports, bags. Depends on the pure core, not on rclpy."""
