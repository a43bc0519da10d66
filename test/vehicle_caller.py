"""A keyless process calling the vehicle's services directly (test_vehicle_calls.py).

Prints one line per attempt: ``NAME RESULT``. Run with an empty ROS_HOME: it holds no key.
``PREFIX --send JSON`` sends one captured ToolCall request (its fields as JSON) instead: a
replay of a call the executor signed.
"""
from __future__ import annotations

import json
import sys
import time

import rclpy
from std_srvs.srv import Trigger

from tool_router.srv import ToolCall


CLIENTS: dict = {}  # one client per service: a probe's answer matched its reply path


def call(node, srv_type, name, request, wait_s=10.0, tries=20, answer_s=2.0):
    if (node, name) not in CLIENTS:
        CLIENTS[node, name] = node.create_client(srv_type, name)
    client = CLIENTS[node, name]
    if not client.wait_for_service(timeout_sec=wait_s):
        return None
    for _ in range(tries):  # the first reply can be lost before the reply writer matched
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=answer_s)
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


def send(prefix: str, fields: str) -> int:
    rclpy.init()
    node = rclpy.create_node('vehicle_replayer')
    try:
        # an unsigned probe first, answered (refused) once both sides have matched: a resent
        # captured call would be refused as a replay of itself, so it is sent once
        name = f'{prefix}/tool_call'
        if call(node, ToolCall, name, ToolCall.Request(tool='battery_status')) is None:
            print('tool_call', 'no answer to the probe')
            return 0
        got = call(node, ToolCall, name, ToolCall.Request(**json.loads(fields)), tries=1,
                    answer_s=30.0)
        print('tool_call', f'{got.success} {got.failure_mode} {got.message}' if got
              else 'no answer')
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    if len(sys.argv) > 3 and sys.argv[2] == '--send':
        raise SystemExit(send(sys.argv[1], sys.argv[3]))
    raise SystemExit(main(sys.argv[1]))
