"""Who may say yes, and who may ask: operator keys, signatures and security events (pure).

An operator is a name, a role and a key id; the key (32 random bytes, hex) lives
in a file readable only by its owner and is never put in parameters, logs,
traces or messages. A confirmation carries an HMAC-SHA256 over
:func:`confirmation_payload` (request id, tool, decision, timestamp, nonce, key
id); an executed request carries one over :func:`execute_payload` (request id,
request text, execute flag, timestamp, nonce, key id). :class:`ConfirmationVerifier`
checks the key id, the signature, the freshness window, that the nonce was never
used, and that the operator's role covers the risk class of every tool the call
covers (approves, or asks to dispatch). Anything else is a :class:`SecurityRecord`
(written to the trace files) and approves or dispatches nothing.

The operators file (default ``$ROS_HOME/tool_router/operators.yaml``)::

    version: 1
    roles: {pilot: [none, motion, payload, critical], payload_operator: [none, payload]}
    operators:
      - {name: alice, role: pilot, key_id: k-alice-3f9a1c, key_file: keys/k-alice-3f9a1c.key}

``key_file`` is relative to the operators file's directory unless absolute.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import re
import secrets
import stat
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tool_router.errors import ConfigError
from tool_router.paths import ros_home

SIGNATURE_DOMAIN = 'tool_router/confirm/v1'
EXECUTE_DOMAIN = 'tool_router/execute/v1'
SELECT_DOMAIN = 'tool_router/select/v1'
KEY_BYTES = 32
DEFAULT_ROLES: dict[str, list[str]] = {
    'pilot': ['none', 'motion', 'payload', 'critical'],
    'payload_operator': ['none', 'payload'],
    'observer': [],
}
KEY_ID = re.compile(r'^[A-Za-z0-9_.-]{3,64}$')
NONCE = re.compile(r'^[A-Za-z0-9_-]{16,64}$')


def default_operators_file() -> Path:
    """``$ROS_HOME/tool_router/operators.yaml``."""
    return ros_home() / 'tool_router' / 'operators.yaml'


def default_router_key_file() -> Path:
    """``$ROS_HOME/tool_router/keys/router.key``: the key the router signs selections with."""
    return ros_home() / 'tool_router' / 'keys' / 'router.key'


class Operator(BaseModel):
    """One operator as configured in the executor (never holds the key itself)."""

    model_config = ConfigDict(extra='forbid')

    name: str = Field(min_length=1, max_length=64, description='Shown in traces.')
    role: str = Field(description='A role of the file; decides which risk classes it approves.')
    key_id: str = Field(description='Sent with each signature; names the key.')
    key_file: str = Field(description='Hex key file, mode 0600; relative to the operators file.')
    revoked: bool = Field(False, description='A revoked key verifies nothing.')

    @field_validator('key_id')
    @classmethod
    def _key_id(cls, value: str) -> str:
        if not KEY_ID.match(value):
            raise ValueError('key_id must be 3-64 characters of A-Z a-z 0-9 _ . -')
        return value


class OperatorsFile(BaseModel):
    """The operators file: roles and operators."""

    model_config = ConfigDict(extra='forbid')

    version: Literal[1] = 1
    roles: dict[str, list[Literal['none', 'motion', 'payload', 'critical']]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_ROLES.items()},  # type: ignore
        description='Role -> risk classes its operators may approve, and ask to dispatch.')
    operators: list[Operator] = Field(default_factory=list)


class SecurityRecord(BaseModel):
    """A refused control-plane call, written to the trace files (``record: security``)."""

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['1.0'] = '1.0'
    record: Literal['security'] = 'security'
    event: Literal['confirmation_refused', 'execute_refused'] = Field(
        'confirmation_refused', description='confirmation_refused: a /executor/confirm call; '
        'execute_refused: a selection to execute whose requester signature failed.')
    stamp: float = Field(description='When it was refused, seconds since the epoch.')
    request_id: str = Field(description='The request the call named.')
    tool: str = Field('', description="Confirmation: the tool it named ('' = every pending "
                                      'tool).')
    tools: list[str] = Field(default_factory=list,
                             description='execute_refused: the selected tools (none dispatched).')
    approve: bool = Field(False, description='Confirmation: approve (true) or deny.')
    claimed_operator: str = Field(description='The operator_name the caller sent (unverified).')
    key_id: str = Field(description='The key id the caller sent (unverified).')
    key_owner: str = Field('', description='Operator that key id belongs to, if any.')
    reason: Literal['unsigned', 'unknown_key', 'revoked_key', 'bad_signature', 'stale',
                    'replayed_nonce', 'malformed', 'role_not_allowed', 'no_router_key',
                    'bad_router_signature']
    detail: str = Field('', description='Human-readable explanation.')


class Verdict(BaseModel):
    """What the verifier decided about one confirmation call."""

    model_config = ConfigDict(extra='forbid')

    ok: bool
    operator_name: str = Field('', description='The verified operator (from the file).')
    reason: str = ''
    detail: str = ''


# -- keys ----------------------------------------------------------------------
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


# -- signing -------------------------------------------------------------------
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
                    nonce: str, key_id: str) -> bytes:
    """The exact bytes a requester signature covers (docs/SECURITY.md).

    The line ``tool_router/execute/v1``, then each field as
    ``<length in UTF-8 bytes>:<UTF-8 bytes>`` followed by a newline, in this order:
    request id, request text, ``execute`` or ``route``, timestamp (6 decimals),
    nonce, key id. The length prefix makes the split unambiguous, so a newline in
    the request text (or id) cannot move bytes from one field to another.
    """
    return _length_prefixed(EXECUTE_DOMAIN, [request_id, request_text,
                                             'execute' if execute else 'route',
                                             f'{timestamp:.6f}', nonce, key_id])


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
                 clock: Callable[[], float] = time.time) -> RequesterSignature:
    """A fresh requester signature over one request (new nonce, current time)."""
    stamp, nonce = fresh_stamp(clock)
    payload = execute_payload(request_id, request_text, execute, stamp, nonce, key_id)
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
    """The router's signing key from ``path`` (:func:`read_key`'s checks).

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
    """:func:`sign_selection` of a SelectedCapabilities message's fields.

    ``key`` defaults to the key of :func:`default_router_key_file` (made when missing): what
    the router node signs with by default, and what a benchmark or test playing the router uses.
    """
    if key is None:
        key = router_key(default_router_key_file(), create=True)
    return sign_selection(key, msg.request_id, msg.request_text, msg.tools, msg.clause_index,
                          msg.conditions, msg.nonce)


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


# -- the operators file --------------------------------------------------------
def load_operators_file(path: str | Path) -> OperatorsFile:
    """Read and validate an operators file (no keys are read)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding='utf-8')) or {}
    except OSError as exc:
        raise ConfigError(f'cannot read operators file: {exc.strerror}', where=str(path)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f'not YAML: {exc}', where=str(path)) from None
    try:
        parsed = OperatorsFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = '.'.join(str(p) for p in err['loc'])
        raise ConfigError(f'field {field}: {err["msg"]}', where=str(path)) from None
    for op in parsed.operators:
        if op.role not in parsed.roles:
            raise ConfigError(f'operator {op.name}: unknown role {op.role!r}', where=str(path),
                              hint=f'roles: {", ".join(sorted(parsed.roles))}')
    ids = [op.key_id for op in parsed.operators]
    if len(set(ids)) != len(ids):
        raise ConfigError('a key_id is used twice', where=str(path))
    return parsed


def save_operators_file(path: Path, data: OperatorsFile) -> None:
    """Write the operators file atomically (mode 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + '.tmp')
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(data.model_dump(mode='json'), handle, sort_keys=False)
    os.replace(tmp, path)


def key_path(operators_file: Path, op: Operator) -> Path:
    """The key file of an operator (relative paths are relative to the operators file)."""
    p = Path(op.key_file).expanduser()
    return p if p.is_absolute() else operators_file.parent / p


def signing_key(operators_file: Path, operator_name: str = '', key_id: str = '',
                key_file: str | Path = '') -> tuple[bytes, str]:
    """The key and key id a CLI signs with (ConfigError saying what to do when there is none).

    ``key_file`` wins (its key id is ``key_id``, else the file name without ``.key``);
    otherwise the active key ``key_id`` of the operators file, else the active key of
    ``operator_name``.
    """
    if key_file:
        path = Path(key_file)
        return read_key(path), key_id or path.stem
    if not operators_file.exists():
        raise ConfigError('no operators file', where=str(operators_file),
                          hint=f'tool-router operator add {operator_name or "NAME"} --role '
                               'pilot creates one, or pass --key FILE')
    active = [op for op in load_operators_file(operators_file).operators if not op.revoked]
    if key_id:
        ops = [op for op in active if op.key_id == key_id]
        wanted = f'key {key_id!r}'
    else:
        ops = [op for op in active if op.name == operator_name]
        wanted = f'operator {operator_name!r}'
    if not ops:
        raise ConfigError(f'{wanted} has no active key', where=str(operators_file),
                          hint='--operator NAME, --key-id ID or --key FILE; '
                               'tool-router operator list shows the keys')
    return read_key(key_path(operators_file, ops[0])), ops[0].key_id


def add_operator(operators_file: Path, name: str, role: str) -> Operator:
    """Create a key (0600) and append the operator to the file (created if missing)."""
    data = (load_operators_file(operators_file) if operators_file.exists()
            else OperatorsFile())
    if role not in data.roles:
        raise ConfigError(f'unknown role {role!r}', where=str(operators_file),
                          hint=f'roles: {", ".join(sorted(data.roles))}')
    if any(op.name == name and not op.revoked for op in data.operators):
        raise ConfigError(f'operator {name!r} already has an active key',
                          where=str(operators_file),
                          hint=f'tool-router operator revoke {name} first')
    slug = re.sub(r'[^A-Za-z0-9_-]', '', name)[:24] or 'op'
    key_id = f'k-{slug}-{secrets.token_hex(3)}'
    rel = Path('keys') / f'{key_id}.key'
    write_key(operators_file.parent / rel)
    op = Operator(name=name, role=role, key_id=key_id, key_file=str(rel))
    data.operators.append(op)
    save_operators_file(operators_file, data)
    return op


def revoke_operator(operators_file: Path, name_or_key: str) -> list[Operator]:
    """Mark the operator's active keys revoked and delete their key files."""
    data = load_operators_file(operators_file)
    hit = [op for op in data.operators if not op.revoked and name_or_key in (op.name, op.key_id)]
    if not hit:
        raise ConfigError(f'no active operator or key {name_or_key!r}', where=str(operators_file))
    for op in hit:
        op.revoked = True
        try:
            key_path(operators_file, op).unlink()
        except OSError:
            pass
    save_operators_file(operators_file, data)
    return hit


# -- verification --------------------------------------------------------------
class ConfirmationVerifier:
    """Checks signed confirmations against the configured operators (thread-safe).

    ``risk_of`` maps a tool name to its risk class. Keys are read once here and
    kept only in memory.
    """

    def __init__(self, operators: OperatorsFile, keys: dict[str, bytes],
                 risk_of: Callable[[str], str], max_age_s: float = 30.0,
                 clock: Callable[[], float] = time.time) -> None:
        self._ops = {op.key_id: op for op in operators.operators}
        self._roles = operators.roles
        self._keys = keys
        self._risk_of = risk_of
        self.max_age_s = max_age_s
        self._clock = clock
        self._nonces: dict[str, float] = {}
        self._longest_window = max_age_s  # nonces are kept twice the longest window in use
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path, risk_of: Callable[[str], str], max_age_s: float = 30.0,
                  clock: Callable[[], float] = time.time) -> 'ConfirmationVerifier':
        """Load the operators file and every active key (ConfigError on a bad key file)."""
        data = load_operators_file(path) if path.exists() else OperatorsFile()
        keys = {op.key_id: read_key(key_path(path, op)) for op in data.operators
                if not op.revoked}
        return cls(data, keys, risk_of, max_age_s, clock)

    @property
    def active_operators(self) -> list[Operator]:
        """Operators with a loaded key."""
        return [op for op in self._ops.values() if op.key_id in self._keys]

    def verify(self, request_id: str, tool: str, approve: bool, timestamp: float, nonce: str,
               key_id: str, signature: str, tools: Iterable[str]) -> Verdict:
        """Decide one confirmation; ``tools`` are the pending tools the decision would cover.

        The role is checked for approvals only: any verified operator may deny.
        """
        return self._verify(
            lambda: confirmation_payload(request_id, tool, approve, timestamp, nonce, key_id),
            timestamp, nonce, key_id, signature, list(tools) if approve else [], 'approve')

    def verify_request(self, request_id: str, request_text: str, timestamp: float, nonce: str,
                       key_id: str, signature: str, tools: Iterable[str],
                       max_age_s: float | None = None) -> Verdict:
        """Decide whether a selection to execute was asked for by an operator who may ask.

        The role must cover the risk class of every tool of the selection (so in
        particular the highest); the signature covers the request id and text, not the
        tools, which are the router's choice. ``max_age_s`` defaults to the verifier's.
        """
        return self._verify(
            lambda: execute_payload(request_id, request_text, True, timestamp, nonce, key_id),
            timestamp, nonce, key_id, signature, list(tools), 'dispatch', max_age_s)

    def _verify(self, payload: Callable[[], bytes], timestamp: float, nonce: str, key_id: str,
                signature: str, tools: list[str], verb: str,
                max_age_s: float | None = None) -> Verdict:
        """Signed, well-formed, known key, signature, freshness, nonce, then the role."""
        if not signature and not key_id:
            return Verdict(ok=False, reason='unsigned', detail='no key id and no signature')
        if not NONCE.match(nonce or '') or not re.fullmatch(r'[0-9a-f]{64}', signature or ''):
            return Verdict(ok=False, reason='malformed', detail='nonce or signature malformed')
        if not math.isfinite(timestamp):
            return Verdict(ok=False, reason='malformed', detail='timestamp is not a number')
        op = self._ops.get(key_id)
        if op is None:
            return Verdict(ok=False, reason='unknown_key', detail=f'no operator has key {key_id}')
        key = self._keys.get(key_id)
        if op.revoked or key is None:
            return Verdict(ok=False, reason='revoked_key', detail=f'key {key_id} is revoked')
        expected = sign(key, payload())
        if not hmac.compare_digest(expected, signature):
            return Verdict(ok=False, reason='bad_signature',
                           detail=f'signature does not match key {key_id}')
        window = self.max_age_s if max_age_s is None else max_age_s
        now = self._clock()
        age = now - timestamp
        if abs(age) > window:
            return Verdict(ok=False, reason='stale', detail=f'signed {age:.1f} s ago, window '
                                                            f'{window:g} s')
        with self._lock:
            self._longest_window = max(self._longest_window, window)
            keep = 2 * self._longest_window
            for old in [n for n, t in self._nonces.items() if now - t > keep]:
                del self._nonces[old]
            if nonce in self._nonces:
                return Verdict(ok=False, reason='replayed_nonce', detail='nonce used before')
            self._nonces[nonce] = now
        allowed = set(self._roles.get(op.role, []))
        refused = [t for t in tools if self._risk_of(t) not in allowed]
        if refused:
            return Verdict(ok=False, reason='role_not_allowed', operator_name=op.name,
                           detail=f'role {op.role} may not {verb} '
                                  + ', '.join(f'{t} ({self._risk_of(t)})' for t in refused))
        return Verdict(ok=True, operator_name=op.name)

    def owner(self, key_id: str) -> str:
        """Name of the operator a key id belongs to ('' if none)."""
        op = self._ops.get(key_id)
        return op.name if op else ''
