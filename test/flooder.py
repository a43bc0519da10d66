"""A keyless attacker that floods the executor's selection topic (for test_flood.py).

It holds no key of any kind (its ROS_HOME is empty): it publishes forged SelectedCapabilities
(random request ids, an emergency stop or a landing, a made-up router signature) on the
selection topic as fast as one Python process can (or at ``FLOOD_RATE`` per second), until
SIGINT, then prints how many it sent.
A real process over DDS with the executor's own QoS for that topic.
"""
from __future__ import annotations

import os
import signal
import time
import uuid

import rclpy

from tool_router.msg import SelectedCapabilities, ToolChoice


def main() -> int:
    rclpy.init()
    node = rclpy.create_node('flooder')
    pub = node.create_publisher(SelectedCapabilities, os.environ.get(
        'FLOOD_TOPIC', '/tool_router/selected'), 10)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while pub.get_subscription_count() == 0 and not stop:
        time.sleep(0.05)
    rate = float(os.environ.get('FLOOD_RATE', '0'))  # messages per second; 0 = flat out
    print('flooding', flush=True)
    sent, start = 0, time.monotonic()
    while not stop:
        if rate and sent >= rate * (time.monotonic() - start):
            time.sleep(0.001)
            continue
        tool = 'emergency_stop' if sent % 2 else 'land'
        pub.publish(SelectedCapabilities(
            request_id=f'forged-{uuid.uuid4().hex[:12]}', request_text=tool.replace('_', ' '),
            choices=[ToolChoice(tool=tool, score=1.0)], policy='lcr',
            router_signature='ab' * 32, key_id='k-mallory', nonce=uuid.uuid4().hex,
            timestamp=time.time(), signature='cd' * 32))
        sent += 1
    elapsed = time.monotonic() - start
    print(f'sent {sent} in {elapsed:.1f} s ({sent / max(elapsed, 1e-9):.0f}/s)', flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
