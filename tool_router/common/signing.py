"""Keys and signatures both wings use (pure): key files, the signed payloads, HMAC-SHA256.

A key is 32 random bytes, hex, in a file readable only by its owner (mode 0600; checked by
:func:`check_key_file`), never put in parameters, logs, traces or messages. Three payloads are
signed, each starting with its own domain line so that one can never pass for another:

* :func:`execute_payload` -- a requester's request to execute (operator key);
* :func:`selection_payload` -- the router's selection of tools for that request (router key);
* :func:`confirmation_payload` -- an operator's approve/deny of one tool (operator key);
* :func:`cancel_payload` -- an operator's cancellation of a condition watch (operator key);
* :func:`config_payload` -- an administrator's run-time change of the router's configuration
  (operator key, role ``admin``);
* :func:`ack_payload` -- the executor's answer to one selection (executor key).

Who may sign what, and the checks of a received signature (freshness, nonces, roles), are the
executor's: :mod:`tool_router.executor.auth`.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from tool_router.common.errors import ConfigError
from tool_router.common.paths import ros_home

SIGNATURE_DOMAIN = 'tool_router/confirm/v1'
EXECUTE_DOMAIN = 'tool_router/execute/v2'
SELECT_DOMAIN = 'tool_router/select/v1'
CANCEL_DOMAIN = 'tool_router/cancel/v1'
CONFIG_DOMAIN = 'tool_router/config/v1'
ACK_DOMAIN = 'tool_router/ack/v1'
CALL_DOMAIN = 'tool_router/call/v1'
KEY_BYTES = 32


def default_router_key_file() -> Path:
    """``$ROS_HOME/tool_router/keys/router.key``: the key the router signs selections with."""
    return ros_home() / 'tool_router' / 'keys' / 'router.key'


def default_executor_key_file() -> Path:
    """``$ROS_HOME/tool_router/keys/executor.key``: the key the executor signs its acks with."""
    return ros_home() / 'tool_router' / 'keys' / 'executor.key'


def check_key_file(path: Path) -> None:
    """Refuse a key file that is missing, not a regular file, or readable by group/others."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f'cannot read key file: {exc.strerror}', where=str(path),
                          hint='tool-router operator add NAME --role ROLE creates one') from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError('key file is not a regular file', where=str(path))
    if info.st_mode & 0o077:
        raise ConfigError(f'key file is accessible by group or others '
                          f'(mode {stat.S_IMODE(info.st_mode):04o})', where=str(path),
                          hint=f'chmod 600 {path}')
    if hasattr(os, 'getuid') and info.st_uid != os.getuid():
        raise ConfigError('key file belongs to another user', where=str(path))


def read_key(path: str | Path) -> bytes:
    """The key bytes of a key file, after :func:`check_key_file`."""
    path = Path(path)
    check_key_file(path)
    text = path.read_text(encoding='ascii', errors='replace').strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ConfigError('key file does not hold a hex key', where=str(path)) from None
    if len(key) < 16:
        raise ConfigError(f'key too short ({len(key)} bytes, need >= 16)', where=str(path))
    return key


def write_key(path: Path) -> None:
    """Create a new random key file with mode 0600 (refuses to overwrite)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, 'w', encoding='ascii') as handle:
        handle.write(secrets.token_hex(KEY_BYTES) + '\n')


def confirmation_payload(request_id: str, tool: str, approve: bool, timestamp: float,
                         nonce: str, key_id: str) -> bytes:
    """The exact bytes a confirmation signature covers."""
    fields = [SIGNATURE_DOMAIN, request_id, tool, 'approve' if approve else 'deny',
              f'{timestamp:.6f}', nonce, key_id]
    return '\n'.join(fields).encode('utf-8')


def sign(key: bytes, payload: bytes) -> str:
    """HMAC-SHA256 of ``payload``, hex."""
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def execute_payload(request_id: str, request_text: str, execute: bool, timestamp: float,
                    nonce: str, key_id: str, policy: str = '', max_tools: int = 0) -> bytes:
    """The exact bytes a requester signature covers (docs/SECURITY.md).

    The line ``tool_router/execute/v2``, then each field as
    ``<length in UTF-8 bytes>:<UTF-8 bytes>`` followed by a newline, in this order:
    request id, request text, ``execute`` or ``route``, timestamp (6 decimals),
    nonce, key id, the policy asked for ('' = the router's default), the tool bound
    asked for (decimal; 0 = the router's). The length prefix makes the split
    unambiguous, so a newline in the request text (or id) cannot move bytes from one
    field to another. Version 1 had no policy and no bound: one could change them in
    flight; its signatures no longer verify.
    """
    return _length_prefixed(EXECUTE_DOMAIN, [request_id, request_text,
                                             'execute' if execute else 'route',
                                             f'{timestamp:.6f}', nonce, key_id, policy,
                                             str(int(max_tools))])


class RequesterSignature(BaseModel):
    """The requester signature fields (of RouteRequest, Request and SelectedCapabilities)."""

    model_config = ConfigDict(extra='forbid')

    key_id: str = ''
    timestamp: float = 0.0
    nonce: str = ''
    signature: str = ''


def fresh_stamp(clock: Callable[[], float] = time.time) -> tuple[float, str]:
    """The (timestamp, nonce) of a new signature: the clock to the microsecond, 18 random bytes."""
    return round(clock(), 6), secrets.token_urlsafe(18)


def sign_request(key: bytes, key_id: str, request_id: str, request_text: str,
                 execute: bool = True,
                 clock: Callable[[], float] = time.time, policy: str = '',
                 max_tools: int = 0) -> RequesterSignature:
    """A fresh requester signature over one request (new nonce, current time)."""
    stamp, nonce = fresh_stamp(clock)
    payload = execute_payload(request_id, request_text, execute, stamp, nonce, key_id, policy,
                              max_tools)
    return RequesterSignature(key_id=key_id, timestamp=stamp, nonce=nonce,
                              signature=sign(key, payload))


def _length_prefixed(domain: str, fields: Iterable[str]) -> bytes:
    """``domain``, a newline, then each field as ``<UTF-8 length>:<UTF-8 bytes>`` + newline."""
    out = bytearray(domain.encode('ascii') + b'\n')
    for field in fields:
        data = field.encode('utf-8')
        out += str(len(data)).encode('ascii') + b':' + data + b'\n'
    return bytes(out)


def selection_payload(request_id: str, request_text: str, tools: Iterable[str],
                      clause_index: Iterable[int], conditions: Iterable[str],
                      nonce: str) -> bytes:
    """The exact bytes a router signature covers (docs/SECURITY.md).

    The line ``tool_router/select/v1``, then, length-prefixed as in :func:`execute_payload`:
    request id, request text, the tools, their clause indices and their conditions (each list
    as JSON), and the requester signature's nonce ('' when unsigned). It binds the tools the
    router picked to the request the operator signed: a selection with other tools, other
    conditions or another request's signature fails.
    """
    return _length_prefixed(SELECT_DOMAIN, [
        request_id, request_text, json.dumps(list(tools)),
        json.dumps([int(i) for i in clause_index]), json.dumps(list(conditions)), nonce])


def router_key(path: Path, create: bool = False) -> bytes:
    """The router's (or the executor's) signing key from ``path`` (:func:`read_key`'s checks).

    ``create``: make a new one (mode 0600) when the file does not exist; a concurrent
    creator's key wins and is read.
    """
    if create and not path.exists():
        try:
            write_key(path)
        except FileExistsError:
            pass
    return read_key(path)


def sign_selection(key: bytes, request_id: str, request_text: str, tools: Iterable[str],
                   clause_index: Iterable[int], conditions: Iterable[str], nonce: str) -> str:
    """The router signature of a selection (hex HMAC-SHA256 of :func:`selection_payload`)."""
    return sign(key, selection_payload(request_id, request_text, tools, clause_index,
                                       conditions, nonce))


def selection_signature(msg: Any, key: bytes | None = None) -> str:
    """:func:`sign_selection` of a SelectedCapabilities message's choices and fields.

    ``key`` defaults to the key of :func:`default_router_key_file` (made when missing): what
    the router node signs with by default, and what a benchmark or test playing the router uses.
    """
    if key is None:
        key = router_key(default_router_key_file(), create=True)
    choices = list(msg.choices)
    return sign_selection(key, msg.request_id, msg.request_text, [c.tool for c in choices],
                          [c.clause_index for c in choices], [c.condition for c in choices],
                          msg.nonce)


def router_signature_ok(key: bytes, signature: str, request_id: str, request_text: str,
                        tools: Iterable[str], clause_index: Iterable[int],
                        conditions: Iterable[str], nonce: str) -> bool:
    """Whether ``signature`` is the router's signature of this selection (constant time)."""
    expected = sign_selection(key, request_id, request_text, tools, clause_index, conditions,
                              nonce)
    # as bytes: compare_digest refuses str with non-ASCII characters, and this one comes off
    # the network
    return hmac.compare_digest(expected.encode('ascii'),
                               signature.strip().lower().encode('utf-8', 'replace'))


class SignedConfirmation(BaseModel):
    """The signed fields of a ConfirmTool request."""

    model_config = ConfigDict(extra='forbid')

    request_id: str
    tool: str
    approve: bool
    timestamp: float
    nonce: str
    key_id: str
    signature: str


def sign_confirmation(key: bytes, key_id: str, request_id: str, tool: str, approve: bool,
                      clock: Callable[[], float] = time.time) -> SignedConfirmation:
    """A fresh signed confirmation (new nonce, current time)."""
    stamp, nonce = fresh_stamp(clock)
    payload = confirmation_payload(request_id, tool, approve, stamp, nonce, key_id)
    return SignedConfirmation(request_id=request_id, tool=tool, approve=approve,
                              timestamp=stamp, nonce=nonce, key_id=key_id,
                              signature=sign(key, payload))


class SignedCancel(BaseModel):
    """The signed fields of a CancelWatch request."""

    model_config = ConfigDict(extra='forbid')

    watch_id: str
    request_id: str
    timestamp: float
    nonce: str
    key_id: str
    signature: str


def cancel_payload(watch_id: str, request_id: str, timestamp: float, nonce: str,
                   key_id: str) -> bytes:
    """The exact bytes a watch cancellation signature covers (docs/SECURITY.md).

    The line ``tool_router/cancel/v1``, then, length-prefixed as in :func:`execute_payload`:
    the watch id, the request id (either may be ''), the timestamp (6 decimals), the nonce and
    the key id.
    """
    return _length_prefixed(CANCEL_DOMAIN, [watch_id, request_id, f'{timestamp:.6f}', nonce,
                                            key_id])


def sign_cancel(key: bytes, key_id: str, watch_id: str, request_id: str,
                clock: Callable[[], float] = time.time) -> SignedCancel:
    """A fresh signed watch cancellation (new nonce, current time)."""
    stamp, nonce = fresh_stamp(clock)
    payload = cancel_payload(watch_id, request_id, stamp, nonce, key_id)
    return SignedCancel(watch_id=watch_id, request_id=request_id, timestamp=stamp, nonce=nonce,
                        key_id=key_id, signature=sign(key, payload))


class SignedConfig(BaseModel):
    """The signed fields of a SetConfig request."""

    model_config = ConfigDict(extra='forbid')

    node: str
    changes: dict[str, Any]
    timestamp: float
    nonce: str
    key_id: str
    signature: str


def config_value(value: Any) -> str:
    """A parameter value as the config signature covers it: compact JSON, keys sorted."""
    return json.dumps(value, sort_keys=True, separators=(',', ':'), allow_nan=False)


def config_payload(node: str, changes: Mapping[str, Any], timestamp: float, nonce: str,
                   key_id: str) -> bytes:
    """The exact bytes a configuration change's signature covers (docs/SECURITY.md).

    The line ``tool_router/config/v1``, then, length-prefixed as in :func:`execute_payload`:
    the node's fully qualified name (``/uav1/router_node``: a change signed for one vehicle's
    router does nothing on another's), the number of changes, each change as
    ``NAME=VALUE`` with VALUE in :func:`config_value`'s JSON, sorted by name, the timestamp
    (6 decimals), the nonce and the key id.
    """
    items = [f'{name}={config_value(changes[name])}' for name in sorted(changes)]
    return _length_prefixed(CONFIG_DOMAIN, [node, str(len(items)), *items,
                                            f'{timestamp:.6f}', nonce, key_id])


def sign_config(key: bytes, key_id: str, node: str, changes: Mapping[str, Any],
                clock: Callable[[], float] = time.time) -> SignedConfig:
    """A fresh signed configuration change (new nonce, current time)."""
    stamp, nonce = fresh_stamp(clock)
    payload = config_payload(node, changes, stamp, nonce, key_id)
    return SignedConfig(node=node, changes=dict(changes), timestamp=stamp, nonce=nonce,
                        key_id=key_id, signature=sign(key, payload))


def ack_payload(request_id: str, accepted: bool, reason: str, stamp_sec: int,
                stamp_nanosec: int, selection_signature: str) -> bytes:
    """The exact bytes an executor's ack signature covers (docs/SECURITY.md).

    The line ``tool_router/ack/v1``, then, length-prefixed as in :func:`execute_payload`: the
    request id, ``accepted`` or ``refused``, the reason, the ack's stamp as
    ``<sec>.<nanosec, 9 digits>`` and the router signature of the selection it answers. That
    last field binds the ack to one selection: the executor's genuine refusal of a forged
    selection that copied a request id cannot stand for the answer to the router's own.
    """
    return _length_prefixed(ACK_DOMAIN, [request_id, 'accepted' if accepted else 'refused',
                                         reason, f'{int(stamp_sec)}.{int(stamp_nanosec):09d}',
                                         selection_signature])


def ack_signature(msg: Any, key: bytes | None = None) -> str:
    """The executor's signature of a SelectionAck message (hex HMAC-SHA256 of ack_payload).

    ``key`` defaults to the key of :func:`default_executor_key_file` (made when missing): what
    the executor node signs with by default, and what a test playing the executor uses.
    """
    if key is None:
        key = router_key(default_executor_key_file(), create=True)
    return sign(key, ack_payload(msg.request_id, bool(msg.accepted), msg.reason,
                                 msg.stamp.sec, msg.stamp.nanosec, msg.selection_signature))


def ack_signature_ok(key: bytes, msg: Any) -> bool:
    """Whether a SelectionAck message carries the executor's signature (constant time)."""
    expected = ack_signature(msg, key)
    return hmac.compare_digest(expected.encode('ascii'),
                               str(msg.signature).strip().lower().encode('utf-8', 'replace'))


def call_payload(tool: str, request_id: str, values: Mapping[str, float | bool],
                 timestamp: float, nonce: str) -> bytes:
    """The exact bytes the executor's signature of a vehicle call covers (docs/SECURITY.md).

    The line ``tool_router/call/v1``, then, length-prefixed as in :func:`execute_payload`:
    the tool, the request id, the timestamp (6 decimals), the nonce, then one field per
    argument in name order, ``name=value`` (a number as Python's ``repr`` of the float,
    ``true`` / ``false`` for ``on``). What a ToolCall request carries (``given`` names the
    arguments), so a vehicle endpoint can tell the executor's call from anyone else's.
    """
    args = [f'{name}={_canonical(values[name])}' for name in sorted(values)]
    return _length_prefixed(CALL_DOMAIN, [tool, request_id, f'{timestamp:.6f}', nonce, *args])


def _canonical(value: float | bool) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return repr(float(value))


class SignedCall(BaseModel):
    """The executor's signature fields of one vehicle call (ToolCall)."""

    model_config = ConfigDict(extra='forbid')

    timestamp: float
    nonce: str
    signature: str


def sign_call(key: bytes, tool: str, request_id: str, values: Mapping[str, float | bool],
              clock: Callable[[], float] = time.time) -> SignedCall:
    """A fresh signature of one vehicle call (new nonce, current time)."""
    stamp, nonce = fresh_stamp(clock)
    return SignedCall(timestamp=stamp, nonce=nonce,
                      signature=sign(key, call_payload(tool, request_id, values, stamp, nonce)))
