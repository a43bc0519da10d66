"""Shared ROS glue: spinning a node with clean shutdown, parameter declaration, time stamps."""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterator

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rcl_interfaces.msg import ParameterDescriptor, ParameterType, SetParametersResult
import pydantic

from tool_router.common.errors import first_error
from tool_router.common.param_doors import Doors

# Reply history of a /route_request client. Fast DDS delivers every answer of a service to
# *every* client's reply reader (each client drops the ones not meant for it when it takes
# them), so with the default KEEP_LAST 10 a client whose process is busy for a moment lost
# its own answer under a burst of more than 10 answers to other clients (146 of 3,200 calls
# unanswered with 32 clients; docs/PERFORMANCE.md). 1000 answers to others may arrive before
# this client reads its own.
CLIENT_REPLY_DEPTH = 1000

_TYPES = {
    bool: ParameterType.PARAMETER_BOOL,
    int: ParameterType.PARAMETER_INTEGER,
    float: ParameterType.PARAMETER_DOUBLE,
    str: ParameterType.PARAMETER_STRING,
}


def parameter_descriptions(model: type[pydantic.BaseModel], prefix: str = '') -> dict[str, str]:
    """Dotted parameter name -> the pydantic field description, for nested config models."""
    out: dict[str, str] = {}
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, pydantic.BaseModel):
            out.update(parameter_descriptions(ann, f'{prefix}{name}.'))
        else:
            out[f'{prefix}{name}'] = info.description or ''
    return out


def declare_from_dict(
    node: Node, values: dict[str, Any], descriptions: dict[str, str], doors: Doors,
    prefix: str = '',
) -> None:
    """Declare typed, described parameters from a (nested) dict of defaults.

    A parameter ``doors`` does not make writable is declared ``read_only``: rclpy refuses
    to set it after the declaration (a params file and ``-p`` still give its value at start).
    """
    for key, value in values.items():
        name = f'{prefix}{key}'
        if isinstance(value, dict):
            declare_from_dict(node, value, descriptions, doors, f'{name}.')
            continue
        kind = _TYPES.get(type(value))
        if kind is None:
            continue
        descriptor = ParameterDescriptor(
            type=kind,
            description=descriptions.get(name, ''),
            dynamic_typing=isinstance(value, float),
            read_only=not doors.is_writable(name),
            additional_constraints=doors.descriptor_note(name),
        )
        node.declare_parameter(name, value, descriptor)


def declare_open(node: Node, names: list[str], doors: Doors) -> None:
    """Declare the names of ``names`` not declared yet (a custom tool's binding), read-only.

    Their value is the one given at start; the type is checked by the configuration model.
    """
    for name in names:
        if not node.has_parameter(name):
            node.declare_parameter(name, '', ParameterDescriptor(
                dynamic_typing=True, read_only=not doors.is_writable(name),
                additional_constraints=doors.descriptor_note(name)))


def refuse_fixed(doors: Doors) -> Callable[[list[Any]], SetParametersResult]:
    """An on-set callback refusing every change of a parameter ``doors`` does not make writable.

    The read-only descriptors already stop the node's own parameters inside rclpy; this
    stops the ones rclpy declares (``use_sim_time``) and anything unclassified. Added last,
    it runs first (rclpy calls the newest on-set callback first), so the time source's own
    callback never sees a refused ``use_sim_time``.
    """
    def check(params: list[Any]) -> SetParametersResult:
        reason = doors.refusal(p.name for p in params)
        return SetParametersResult(successful=not reason, reason=reason)
    return check


def parameters_as_dict(node: Node, names: list[str]) -> dict[str, Any]:
    """Nested dict of the current values of dotted parameter names."""
    out: dict[str, Any] = {}
    for name in names:
        value = node.get_parameter(name).value
        target = out
        *parents, leaf = name.split('.')
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return out


def level_logger(node: Node) -> Callable[[str, str], None]:
    """``log(level, message)`` for the pure core's injected loggers, on ``node``'s logger.

    One call line per severity: rclpy remembers the severity of each calling line and refuses
    another one from the same line ("Logger severity cannot be changed between calls").
    """
    logger = node.get_logger()

    def log(level: str, message: str) -> None:
        if level == 'error':
            logger.error(message)
        elif level == 'warning':
            logger.warning(message)
        elif level == 'debug':
            logger.debug(message)
        else:
            logger.info(message)
    return log


def startup_problem(exc: Exception) -> str:
    """Why a node cannot start, as one line: ``parameter field: message`` or the error's text."""
    if isinstance(exc, pydantic.ValidationError):
        return f'parameter {first_error(exc)}'
    return str(exc)


def ros_args_problem(exc: Exception) -> str:
    """The refusal of the command line by rcl (a params file it cannot read) as one line.

    rcl says ``failed to initialize rcl: Couldn't parse params file: '--params-file X'.
    Error: Error opening YAML file, at /project/src/parser.c:271, at ...``: the C source
    locations are cut off.
    """
    import re

    text = str(exc).replace('failed to initialize rcl: ', '')
    text = re.sub(r',? at [^,]*\.c:\d+', '', text).strip()
    match = re.search(r"params file: '--params-file ([^']*)'\. Error: (.*)", text)
    if match:
        return f'parameters file {match.group(1)}: {match.group(2).rstrip(". ")}'
    return text


def take_waiting(subscription: Any, limit: int) -> Iterator[Any]:
    """The messages already waiting in a subscription's reader, up to ``limit``, taken now.

    For a callback that must keep up with a flood: the executor takes one message per wait
    (a wait-set round trip each, about 1 ms on a busy 2-core machine), so a callback that
    drains what is waiting reads several times as many messages a second (docs/SECURITY.md,
    "Floods"). Only from the subscription's own callback, in a mutually exclusive group (the
    executor and this loop then never take at once); stops quietly when the subscription is
    destroyed meanwhile.
    """
    for _ in range(limit):
        try:
            with subscription.handle:
                taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
        except Exception:  # noqa: BLE001 - destroyed (deactivated) while draining
            return
        if taken is None:
            return
        yield taken[0]


def stamp_now(node: Node) -> Any:
    """The node clock's current time as a message stamp."""
    return node.get_clock().now().to_msg()


SPIN_WAKE_S = 0.2  # the main thread leaves the wait this often, so a signal is handled


def _stop_on_signals() -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt in the main thread, once.

    rclpy's own handlers shut the context down at once, so everything the node logs while
    it stops (watches cancelled, records written) failed with "Failed to publish log message
    to rosout: publisher's context is invalid"; here the context stays up until the node is
    destroyed. A second SIGTERM terminates; a second SIGINT is ignored.
    """
    import signal

    def stop(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise KeyboardInterrupt(f'signal {signum}')

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def spin(
    make_node: Callable[[], Node],
    args: list[str] | None = None,
    threads: int | Callable[[Any], int] = 4,
) -> int:
    """Init rclpy, build the node, spin a multi-threaded executor, shut down cleanly.

    ``threads`` may be a function of the built node (a count from its parameters). The
    signals are ours (:func:`_stop_on_signals`), not rclpy's: the node is destroyed while
    its context is still up, then the context is shut down.
    """
    from rclpy.signals import SignalHandlerOptions

    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as exc:  # noqa: BLE001 - RCLError: a bad --params-file or --ros-args
        print(f'cannot start: {ros_args_problem(exc)}', file=sys.stderr)
        return 2
    _stop_on_signals()
    node = None
    try:
        node = make_node()
        startup = getattr(node, 'startup', None)
        if startup is not None and not startup():
            return 1
        count = threads(node) if callable(threads) else threads
        executor = MultiThreadedExecutor(num_threads=count)
        executor.add_node(node)
        while rclpy.ok():  # what executor.spin() does, waking up for the signal handlers
            executor.spin_once(timeout_sec=SPIN_WAKE_S)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception as exc:  # noqa: BLE001 - re-raised unless it is a shutdown race
        if rclpy.ok():
            raise  # a failure while running
        # the context was shut down while a callback was publishing or answering: the
        # callback's error reaches spin() after the stop was asked for. A clean stop, not a crash.
        print(f'stopped during a callback ({type(exc).__name__}: {exc})', file=sys.stderr)
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


def service_qos(depth: int) -> QoSProfile:
    """Reliable, volatile, KEEP_LAST ``depth``: a burst is kept, not overwritten.

    For a service it is the depth of the request queue (requests waiting for a
    thread); for a client, the depth of its reply reader (:data:`CLIENT_REPLY_DEPTH`).
    """
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def latched(depth: int) -> QoSProfile:
    """Reliable, transient local: a subscriber that joins later still gets the last ``depth``."""
    return QoSProfile(
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


ACK_HISTORY = 100  # acks kept by the executor's writer for a router whose reader matches late


def ack_qos() -> QoSProfile:
    """Reliable, transient local, the last :data:`ACK_HISTORY` acks (both ends of the ack topic).

    The executor has the router's selection, so that pair of endpoints has matched; its ack
    writer and the router's ack reader are another pair, discovered separately: an ack
    published before they match would be lost (volatile) and the answer time out with the
    selection on disk. Transient local hands a late-matching router the acks it missed.
    """
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=ACK_HISTORY,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def client_qos() -> QoSProfile:
    """QoS of a /route_request client: its own answer survives a burst of others' answers."""
    return service_qos(CLIENT_REPLY_DEPTH)
