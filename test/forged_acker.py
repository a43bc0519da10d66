"""An attacker on the DDS domain who forges executor acks (for test_control_security.py).

Started with a ROS_HOME that holds no key of the vehicle's. For every selection it sees on
the router's selection topic it publishes, on the executor's ack topic and before the executor
can answer (it writes nothing to disk first), acks for that request id:

* unsigned, once "accepted" and once "refused";
* signed with a key of its own (its ROS_HOME's), claiming the selection's router signature;
* the last genuine ack it saw from the executor, re-addressed to this request and flipped.

The order of "accepted" and "refused" alternates from one selection to the next, so whatever
the true outcome, one of the first forged acks says the opposite. It prints how many it sent.
"""
from __future__ import annotations

import rclpy
from rclpy.executors import ExternalShutdownException

from tool_router.common import signing
from tool_router.msg import SelectedCapabilities, SelectionAck
from tool_router.ros.common import ack_qos


def main(argv: list[str] | None = None) -> int:
    rclpy.init(args=argv)
    node = rclpy.create_node('forged_acker')
    pub = node.create_publisher(SelectionAck, 'executor/acks', ack_qos())  # as the executor's
    genuine: list[SelectionAck] = []
    sent = [0]
    mine: set[str] = set()  # signatures of its own forgeries (it hears them too)

    def forge(request_id: str, accepted: bool, selection_signature: str,
              sign: bool = False) -> SelectionAck:
        ack = SelectionAck(stamp=node.get_clock().now().to_msg(), request_id=request_id,
                           accepted=accepted, selection_signature=selection_signature,
                           reason='' if accepted else 'refused (forged): nothing was dispatched')
        if sign:
            ack.signature = signing.ack_signature(ack)  # this ROS_HOME's key: not the executor's
            mine.add(ack.signature)
        return ack

    def on_selection(msg: SelectedCapabilities) -> None:
        first = sent[0] % 2 == 0
        acks = [forge(msg.request_id, first, msg.router_signature),
                forge(msg.request_id, not first, msg.router_signature),
                forge(msg.request_id, first, msg.router_signature, sign=True)]
        if genuine:
            copy = genuine[-1]
            acks.append(SelectionAck(stamp=copy.stamp, request_id=msg.request_id,
                                     accepted=not copy.accepted, reason=copy.reason,
                                     selection_signature=msg.router_signature,
                                     signature=copy.signature))
        for ack in acks:
            pub.publish(ack)
        sent[0] += 1
        print(f'forged {len(acks)} acks for {msg.request_id}', flush=True)

    def on_ack(msg: SelectionAck) -> None:
        if msg.signature and msg.signature not in mine and msg.request_id:
            genuine.append(msg)

    node.create_subscription(SelectedCapabilities, 'tool_router/selected', on_selection, 100)
    node.create_subscription(SelectionAck, 'executor/acks', on_ack, ack_qos())
    print('forged acker ready', flush=True)
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
