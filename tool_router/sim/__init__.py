"""Simulated vehicles for the demo and the tests (pure, no rclpy).

:mod:`.vehicle` is the state behind ``tool-router serve --sim``, :mod:`.autopilot` a MAVLink
autopilot over UDP.
"""
