"""A keyless process on the DDS domain that tries to set every parameter of some nodes.

    ROS_HOME=<empty dir> python test/param_attacker.py /router_node /executor_node

For each node: list_parameters, then for every name a set_parameters to another value of
the same type, a set_parameters that deletes it (NOT_SET), and one set_parameters_atomically;
then the values are read back. Prints one JSON object: node -> name -> what happened.
Used by test/test_param_doors.py; it holds no key and reads no file of the vehicle.
"""
from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import rclpy
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import (DescribeParameters, GetParameters, ListParameters,
                                SetParameters, SetParametersAtomically)
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

WAIT_S = 120.0  # discovery on a loaded machine; an event wait, not a bound on the test


def other(value: ParameterValue) -> ParameterValue:
    """A different value of the same type (a valid one where the obvious change is valid)."""
    t = value.type
    out = ParameterValue(type=t)
    if t == ParameterType.PARAMETER_BOOL:
        out.bool_value = not value.bool_value
    elif t == ParameterType.PARAMETER_INTEGER:
        out.integer_value = value.integer_value + 1
    elif t == ParameterType.PARAMETER_DOUBLE:
        out.double_value = value.double_value * 2 + 1.0
    elif t == ParameterType.PARAMETER_STRING:
        out.string_value = value.string_value + '_x'
    else:
        out.type = ParameterType.PARAMETER_STRING
        out.string_value = 'x'
    return out


def plain(value: ParameterValue) -> Any:
    t = value.type
    return {ParameterType.PARAMETER_BOOL: value.bool_value,
            ParameterType.PARAMETER_INTEGER: value.integer_value,
            ParameterType.PARAMETER_DOUBLE: value.double_value,
            ParameterType.PARAMETER_STRING: value.string_value}.get(t, f'<type {t}>')


class Caller:
    def __init__(self, node: Node) -> None:
        self.node = node

    def call(self, srv: Any, name: str, request: Any) -> Any:
        client = self.node.create_client(srv, name)
        try:
            if not client.wait_for_service(timeout_sec=WAIT_S):
                raise SystemExit(f'no service {name}')
            # a fresh client's first reply can be lost while discovery completes: ask again
            for _ in range(20):
                future = client.call_async(request)
                done = threading.Event()
                future.add_done_callback(lambda _: done.set())
                if done.wait(10.0):
                    return future.result()
                client.remove_pending_request(future)
            raise SystemExit(f'no answer from {name}')
        finally:
            self.node.destroy_client(client)


def attack(caller: Caller, target: str) -> dict[str, Any]:
    listed = caller.call(ListParameters, f'{target}/list_parameters', ListParameters.Request())
    names = sorted(listed.result.names)
    before = caller.call(GetParameters, f'{target}/get_parameters',
                         GetParameters.Request(names=names)).values
    described = caller.call(DescribeParameters, f'{target}/describe_parameters',
                            DescribeParameters.Request(names=names)).descriptors
    out: dict[str, Any] = {}
    for name, value, desc in zip(names, before, described):
        changed = Parameter(name=name, value=other(value))
        deleted = Parameter(name=name, value=ParameterValue(type=ParameterType.PARAMETER_NOT_SET))
        set_one = caller.call(SetParameters, f'{target}/set_parameters',
                              SetParameters.Request(parameters=[changed])).results[0]
        delete = caller.call(SetParameters, f'{target}/set_parameters',
                             SetParameters.Request(parameters=[deleted])).results[0]
        atomic = caller.call(SetParametersAtomically, f'{target}/set_parameters_atomically',
                             SetParametersAtomically.Request(parameters=[changed])).result
        out[name] = {'value': plain(value), 'tried': plain(changed.value),
                     'read_only': bool(desc.read_only),
                     'constraints': desc.additional_constraints,
                     'set': set_one.successful, 'reason': set_one.reason,
                     'delete': delete.successful, 'delete_reason': delete.reason,
                     'atomic': atomic.successful}
    # a name nobody declared: a new parameter cannot be created either
    new = caller.call(SetParameters, f'{target}/set_parameters', SetParameters.Request(
        parameters=[Parameter(name='moda', value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value='shadow'))])).results[0]
    after = caller.call(GetParameters, f'{target}/get_parameters',
                        GetParameters.Request(names=names)).values
    return {'parameters': out, 'undeclared_set': new.successful,
            'undeclared_reason': new.reason,
            'unchanged': [n for n, a, b in zip(names, after, before) if plain(a) == plain(b)]}


def main(targets: list[str]) -> int:
    rclpy.init()
    node = rclpy.create_node(f'param_attacker_{int(time.time() * 1000) % 100000}')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        caller = Caller(node)
        report = {t: attack(caller, t) for t in targets}
    finally:
        # the spin thread must have returned before the context goes: a thread still inside
        # the wait set at interpreter exit aborts the process ("terminate called without an
        # active exception", exit -6: seen once in a fresh-clone CI run on a busy machine)
        executor.shutdown()
        thread.join(timeout=10.0)
        node.destroy_node()
        rclpy.try_shutdown()
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
