"""A keyless process calling the vehicle's services directly (test_vehicle_calls.py).

Prints one line per attempt: ``NAME RESULT``. Run with an empty ROS_HOME: it holds no key.
"""
from __future__ import annotations

import sys
import time

import rclpy
from std_srvs.srv import Trigger

from tool_router.srv import ToolCall


def call(node, srv_type, name, request, wait_s=10.0):
    client = node.create_client(srv_type, name)
    if not client.wait_for_service(timeout_sec=wait_s):
        return None
    for _ in range(20):  # the first reply can be lost before the reply writer matched
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=2.0)
        if future.done():
            return future.result()
    return None


def main(prefix: str) -> int:
    rclpy.init()
    node = rclpy.create_node('vehicle_caller')
    try:
        arm = call(node, Trigger, f'{prefix}/arm_motors', Trigger.Request(), wait_s=3.0)
        print('arm_motors_service', 'absent' if arm is None else f'{arm.success} {arm.message}')
        unsigned = call(node, ToolCall, f'{prefix}/tool_call',
                        ToolCall.Request(tool='arm_motors', request_id='x'))
        print('tool_call_arm_motors', f'{unsigned.success} {unsigned.failure_mode} '
              f'{unsigned.message}' if unsigned else 'no answer')
        # a fresh timestamp, so that the refusal is the signature's, not the age's
        forged = call(node, ToolCall, f'{prefix}/tool_call', ToolCall.Request(
            tool='takeoff', request_id='x', given=['height_m'], height_m=30.0,
            timestamp=time.time(), nonce='n2', signature='ab' * 32))
        print('tool_call_forged', f'{forged.success} {forged.failure_mode} {forged.message}'
              if forged else 'no answer')
        battery = call(node, Trigger, f'{prefix}/battery_status', Trigger.Request())
        print('battery_status_service', f'{battery.success} {battery.message.splitlines()[0]}'
              if battery else 'no answer')
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1]))
