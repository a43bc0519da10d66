"""rosbag2 files of requests and selections, via ``rosbags`` (no ROS install needed).

Two kinds of messages matter:

* ``tool_router/msg/Request`` (``/tool_router/requests``): a request and, for
  evaluation, its annotation (``level`` and ``expected_tools``).
* ``tool_router/msg/SelectedCapabilities`` (``/tool_router/decisions``: every
  decision, executed or not; ``/tool_router/selected`` carries only the executed
  ones): what the router node answered.

A bag with requests only is a dataset: ``tool-router eval`` routes it like a
JSONL file. A bag that also holds selections is a recorded session: each
selection is joined to the request with the same ``request_id`` and scored as
recorded; a request with no selection counts as an empty answer (the node
publishes nothing when it selects no tool).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from tool_router.common.errors import DatasetError, one_line
from tool_router.common.explanation import Explanation
from tool_router.evaluation.dataset import Example, check_example
from tool_router.common.paths import share_dir

REQUEST_TYPE = 'tool_router/msg/Request'
SELECTION_TYPE = 'tool_router/msg/SelectedCapabilities'
REQUEST_TOPIC = '/tool_router/requests'
SELECTION_TOPIC = '/tool_router/decisions'  # every decision; never executed
BAG_VERSION = 9  # rosbag2 metadata version written by Jazzy


# SelectedCapabilities' own message types, registered before it (it refers to them)
NESTED_TYPES = ('tool_router/msg/Evidence', 'tool_router/msg/ToolChoice')


def typestore() -> Any:
    """A Jazzy typestore with the package's Request and SelectedCapabilities registered."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    for msgtype in (*NESTED_TYPES, REQUEST_TYPE, SELECTION_TYPE):
        name = msgtype.rsplit('/', 1)[1]
        text = (share_dir() / 'msg' / f'{name}.msg').read_text(encoding='utf-8')
        store.register(get_types_from_msg(text, msgtype))
    return store


def connection_typestore(conn: Any, default: Any) -> Any:
    """A typestore that decodes ``conn`` by the definition recorded in the bag, if it has one.

    A bag recorded before a message changed (the requester signature fields of Request and
    SelectedCapabilities; the ToolChoice[] that replaced SelectedCapabilities' per-tool
    arrays) holds other messages than today's definition; decoding them by their own
    definition keeps old bags readable. The recorded definition lists the message, then each
    type it uses after a line of ``=`` and ``MSG: <type>``.
    """
    msgdef = getattr(conn, 'msgdef', None)
    text = str(getattr(msgdef, 'data', '') or '')
    if not text or getattr(getattr(msgdef, 'format', None), 'name', '') != 'MSG':
        return default
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    own, *used = text.split('\n' + '=' * 80 + '\n')
    store = get_typestore(Stores.ROS2_JAZZY)
    for section in reversed(used):  # dependencies first
        header, _, body = section.partition('\n')
        name = header.removeprefix('MSG: ').strip()
        if name.startswith('tool_router/'):
            store.register(get_types_from_msg(body, name.replace('/', '/msg/', 1)
                                              if '/msg/' not in name else name))
    store.register(get_types_from_msg(own, conn.msgtype))
    return store


def is_bag(path: str | Path) -> bool:
    """True for a rosbag2 directory (it has ``metadata.yaml``)."""
    return Path(path).is_dir() and (Path(path) / 'metadata.yaml').is_file()


def _stamp(store: Any, ns: int) -> Any:
    sec, nanosec = divmod(ns, 1_000_000_000)
    return store.types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)


def request_message(store: Any, example: Example, stamp_ns: int, policy: str = '',
                    request_id: str = '') -> Any:
    """A rosbags ``Request`` carrying an example and its annotation."""
    return store.types[REQUEST_TYPE](
        stamp=_stamp(store, stamp_ns), request_id=request_id or example.id, text=example.request,
        policy=policy, execute=False, level=example.level, expected_tools=list(example.tools),
        key_id='', timestamp=0.0, nonce='', signature='',  # route only: never signed
        client_id='', max_tools=0)  # a replayed request is not answered (ros/answers.py)


@dataclass
class BagEntry:
    """One message to write: topic, type, receive time (ns) and CDR bytes or a rosbags message."""

    topic: str
    msgtype: str
    timestamp: int
    data: Any


def write_bag(out: str | Path, entries: Iterable[BagEntry], storage: str = 'mcap') -> Path:
    """Write ``entries`` (any order) to a new rosbag2 directory; fail if it exists."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    out = Path(out)
    if out.exists():
        raise DatasetError('output bag already exists; choose another --out', where=str(out))
    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}.get(storage)
    if plugin is None:
        raise DatasetError(f'unknown storage {storage!r} (expected mcap or sqlite3)')
    store = typestore()
    connections: dict[str, Any] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with Writer(out, version=BAG_VERSION, storage_plugin=plugin) as writer:
        for e in sorted(entries, key=lambda e: e.timestamp):
            if e.topic not in connections:
                connections[e.topic] = writer.add_connection(e.topic, e.msgtype, typestore=store)
            raw = e.data if isinstance(e.data, (bytes, bytearray, memoryview)) \
                else store.serialize_cdr(e.data, e.msgtype)
            writer.write(connections[e.topic], e.timestamp, bytes(raw))
    return out


def write_requests_bag(examples: Sequence[Example], out: str | Path, storage: str = 'mcap',
                       rate_hz: float = 2.0, topic: str = REQUEST_TOPIC,
                       start_ns: int | None = None) -> Path:
    """One ``Request`` per example, spaced by ``1/rate_hz`` seconds, annotation included."""
    if rate_hz <= 0:
        raise DatasetError(f'--rate must be positive, got {rate_hz}')
    store = typestore()
    start = time.time_ns() if start_ns is None else start_ns
    step = int(1e9 / rate_hz)
    entries = []
    for i, ex in enumerate(examples):
        ts = start + i * step
        entries.append(BagEntry(topic, REQUEST_TYPE, ts, request_message(store, ex, ts)))
    return write_bag(out, entries, storage)


# -- reading -------------------------------------------------------------------
@dataclass
class Selection:
    """A recorded ``SelectedCapabilities`` (the fields scoring needs)."""

    request_id: str
    policy: str
    tools: list[str]
    scores: list[float]
    explanation: Explanation
    timestamp: int


@dataclass
class RecordedRequest:
    """A recorded annotated ``Request`` with its receive time."""

    example: Example
    policy: str
    timestamp: int


@dataclass
class BagContents:
    """What a bag holds: recorded requests and the router's selections."""

    requests: list[RecordedRequest] = field(default_factory=list)
    selections: list[Selection] = field(default_factory=list)


def _example(msg: Any, where: str, catalog: Any) -> Example:
    if not msg.level:
        raise DatasetError('request has no annotation (empty level); eval needs annotated '
                           'requests', where=where)
    raw = {'id': msg.request_id, 'level': msg.level, 'request': msg.text,
           'tools': sorted(msg.expected_tools)}
    if not msg.request_id:
        raise DatasetError('request has an empty request_id', where=where)
    try:
        return check_example(raw, catalog)
    except ValueError as exc:
        raise DatasetError(one_line(exc), where=where) from None


def _selection(msg: Any, ts: int, where: str) -> Selection:
    def warn(message: str) -> None:
        print(f'tool-router: warning: {where}: {message} (read as empty)', file=sys.stderr)

    explanation = Explanation.read(msg.explanation_json, warn)
    if hasattr(msg, 'choices'):
        tools, scores = [c.tool for c in msg.choices], [float(c.score) for c in msg.choices]
    else:  # recorded before ToolChoice[] (tool_router/select/v1 messages)
        tools, scores = list(msg.tools), [float(s) for s in msg.scores]
    return Selection(request_id=msg.request_id, policy=msg.policy, tools=tools, scores=scores,
                     explanation=explanation, timestamp=ts)


def read_bag(path: str | Path, catalog: Any = None) -> BagContents:
    """Requests (validated annotations) and selections of a bag; :class:`DatasetError` if bad."""
    from rosbags.rosbag2 import Reader
    path = Path(path)
    if not is_bag(path):
        raise DatasetError('not a rosbag2 directory (no metadata.yaml)', where=str(path))
    store = typestore()
    out = BagContents()
    counts: dict[str, int] = {}
    try:
        with Reader(path) as reader:
            wanted = [c for c in reader.connections if c.msgtype in (REQUEST_TYPE, SELECTION_TYPE)]
            stores = {c.id: connection_typestore(c, store) for c in wanted}
            for conn, ts, raw in reader.messages(connections=wanted):
                counts[conn.topic] = counts.get(conn.topic, 0) + 1
                where = f'{path}: {conn.topic} message {counts[conn.topic]}'
                try:
                    msg = stores[conn.id].deserialize_cdr(raw, conn.msgtype)
                except Exception as exc:  # noqa: BLE001 - any decoding problem is a bad bag
                    raise DatasetError(f'cannot decode {conn.msgtype}: {exc}',
                                       where=where) from None
                if conn.msgtype == REQUEST_TYPE:
                    example = _example(msg, where, catalog)
                    out.requests.append(RecordedRequest(example, msg.policy, ts))
                else:
                    out.selections.append(_selection(msg, ts, where))
    except DatasetError:
        raise
    except Exception as exc:  # noqa: BLE001 - rosbags raises several unrelated types
        raise DatasetError(f'cannot read bag: {exc}', where=str(path)) from None
    if not out.requests:
        raise DatasetError(f'bag has no {REQUEST_TYPE} messages (annotated requests are needed)',
                           where=str(path))
    return out
