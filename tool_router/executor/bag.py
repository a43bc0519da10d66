"""Optional MCAP recording of ExecutionTrace messages with rosbags (no rclpy needed)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tool_router.common.errors import ConfigError
from tool_router.executor.traces import TraceRecord, trace_message_fields
from tool_router.common.paths import share_dir

MSGTYPE = 'tool_router/msg/ExecutionTrace'
OUTCOME_TYPE = 'tool_router/msg/ToolOutcome'


class McapTraceBag:
    """Writes one ExecutionTrace per record to ``<directory>/executor-<time>/`` (MCAP storage).

    The bag is finalised by :meth:`close`; the JSONL files stay the crash-safe record.
    """

    def __init__(self, directory: str | Path, topic: str = '/executor/traces') -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_types_from_msg, get_typestore

        self.typestore = get_typestore(Stores.ROS2_JAZZY)
        for name, msgtype in (('ToolOutcome', OUTCOME_TYPE), ('ExecutionTrace', MSGTYPE)):
            msg_file = share_dir() / 'msg' / f'{name}.msg'
            if not msg_file.exists():
                raise ConfigError(f'{name}.msg not found', where=str(msg_file))
            self.typestore.register(get_types_from_msg(msg_file.read_text(encoding='utf-8'),
                                                       msgtype))
        self.path = Path(directory) / f"executor-{time.strftime('%Y%m%dT%H%M%S')}-bag"
        self._writer: Any = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._conn = self._writer.add_connection(topic, MSGTYPE, typestore=self.typestore)

    def write(self, record: TraceRecord) -> None:
        """Append one record as an ExecutionTrace message, stamped with its dispatch_done time."""
        fields = trace_message_fields(record)
        outcome = self.typestore.types[OUTCOME_TYPE]
        fields['tools'] = [outcome(**t) for t in fields['tools']]
        nanos = int((record.stamps.dispatch_done or record.stamps.received) * 1e9)
        time_type = self.typestore.types['builtin_interfaces/msg/Time']
        msg = self.typestore.types[MSGTYPE](
            stamp=time_type(sec=nanos // 1_000_000_000, nanosec=nanos % 1_000_000_000), **fields)
        self._writer.write(self._conn, nanos, self.typestore.serialize_cdr(msg, MSGTYPE))

    def close(self) -> None:
        """Finish the bag (writes the MCAP summary and metadata.yaml)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
