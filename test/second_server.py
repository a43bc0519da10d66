"""A keyless process that offers a second server on a vehicle's sensor name (test_second_server).

It answers every call on ``SECOND_SERVER_NAME`` (a std_srvs/Trigger service, the simulator's
own type) with a battery reading of 5%: a process on the DDS domain posing as the vehicle so
that a "land below 25%" watch fires at a real battery of 100%. A real process over DDS.
"""
from __future__ import annotations

import json
import os

import rclpy
from rclpy.executors import ExternalShutdownException
from std_srvs.srv import Trigger


def main() -> int:
    rclpy.init()
    node = rclpy.create_node('second_server')

    def answer(request, response):
        response.success = True
        response.message = 'battery 5%\nreading: ' + json.dumps({'battery_pct': 5.0})
        return response

    node.create_service(Trigger, os.environ['SECOND_SERVER_NAME'], answer)
    print('second server up', flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
