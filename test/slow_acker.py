"""A stand-in executor process that holds its acks (for test_router_acks.py).

It subscribes to the router's selections like the executor does and publishes a
``SelectionAck`` (accepted) for each, but only once it holds N
selections (``SLOW_ACKER_HOLD``): a router that waits for one ack before it can
publish the next selection never gets any. A real process over DDS; it records nothing on disk,
which is all it leaves out of the real executor. It signs its acks as the executor does
(the executor key of its ROS_HOME, bound to the selection's router signature).
"""
from __future__ import annotations

import os

import rclpy
from rclpy.executors import ExternalShutdownException

from tool_router.common import signing
from tool_router.msg import SelectedCapabilities, SelectionAck
from tool_router.ros.common import ack_qos


def main(argv: list[str] | None = None) -> int:
    hold = int(os.environ['SLOW_ACKER_HOLD'])
    rclpy.init(args=argv)
    node = rclpy.create_node('slow_acker')
    pub = node.create_publisher(SelectionAck, 'executor/acks', ack_qos())  # as the executor's
    held: list[tuple[str, str]] = []

    def on_selection(msg: SelectedCapabilities) -> None:
        held.append((msg.request_id, msg.router_signature))
        print(f'holding {len(held)}: {msg.request_id}', flush=True)
        if len(held) < hold:
            return
        for request_id, selection_signature in held:
            ack = SelectionAck(request_id=request_id, accepted=True, reason='held',
                               selection_signature=selection_signature)
            ack.signature = signing.ack_signature(ack)
            pub.publish(ack)
        print(f'acked {len(held)}', flush=True)
        held.clear()

    node.create_subscription(SelectedCapabilities, 'tool_router/selected', on_selection, 100)
    print('slow acker ready', flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
