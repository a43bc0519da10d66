"""Who may say yes, and who may ask: operators, their roles and security events (pure).

An operator is a name, a role and a key id; the key lives in a file readable only by
its owner (:mod:`tool_router.common.signing`). A confirmation carries an HMAC-SHA256
over ``confirmation_payload`` (request id, tool, decision, timestamp, nonce, key id);
an executed request carries one over ``execute_payload`` (request id, request text,
execute flag, timestamp, nonce, key id); a watch cancellation one over ``cancel_payload``
(watch id, request id, timestamp, nonce, key id). :class:`ConfirmationVerifier` checks the
key id, the signature, the freshness window, that the nonce was never used, and that the
operator's role covers the risk class of every tool the call covers (approves, asks to
dispatch, or would stop watching); ending a watch of a safety tool (``safety_tools``: land,
return_to_home, hold_position, emergency_stop) also needs a role of ``safety_cancel_roles``
(pilot). Anything else is a :class:`SecurityRecord` (written to the trace files)
and approves or dispatches nothing.

The operators file (default ``$ROS_HOME/tool_router/operators.yaml``)::

    version: 1
    roles: {pilot: [none, motion, payload, critical], payload_operator: [none, payload]}
    operators:
      - {name: alice, role: pilot, key_id: k-alice-3f9a1c, key_file: keys/k-alice-3f9a1c.key}

``key_file`` is relative to the operators file's directory unless absolute.
"""
from __future__ import annotations

import hmac
import math
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tool_router.common.errors import ConfigError
from tool_router.common.paths import ros_home
from tool_router.common.nonces import NonceStore
from tool_router.common.signing import (cancel_payload, config_payload, confirmation_payload,
                                        execute_payload, read_key, sign, write_key)

DEFAULT_ROLES: dict[str, list[str]] = {
    'pilot': ['none', 'motion', 'payload', 'critical'],
    'payload_operator': ['none', 'payload'],
    'observer': [],
    'admin': [],  # approves and asks for no tool; changes the router's configuration
}
# Watches whose action is one of these are the vehicle's own failsafes ("if the battery drops
# below 20 %, return home"): cancelling one takes a role of SAFETY_CANCEL_ROLES.
SAFETY_TOOLS = ['land', 'return_to_home', 'hold_position', 'emergency_stop']
SAFETY_CANCEL_ROLES = ['pilot']
# Roles whose signed `tool-router config set` the router applies (routing/signed_config.py).
CONFIG_ROLES = ['admin']
KEY_ID = re.compile(r'^[A-Za-z0-9_.-]{3,64}$')
NONCE = re.compile(r'^[A-Za-z0-9_-]{16,64}$')


def default_operators_file() -> Path:
    """``$ROS_HOME/tool_router/operators.yaml``."""
    return ros_home() / 'tool_router' / 'operators.yaml'


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
    safety_tools: list[str] = Field(
        default_factory=lambda: list(SAFETY_TOOLS),
        description='Safety actions: a watch that would run one is cancelled only by a role '
                    'of safety_cancel_roles.')
    safety_cancel_roles: list[str] = Field(
        default_factory=lambda: list(SAFETY_CANCEL_ROLES),
        description='Roles that may cancel a watch whose action is a safety tool.')
    config_roles: list[str] = Field(
        default_factory=lambda: list(CONFIG_ROLES),
        description="Roles whose signed run-time change of the router's configuration "
                    '(`tool-router config set`) is applied; a role named here but not in '
                    'roles gives nobody that right.')


class SecurityRecord(BaseModel):
    """A refused control-plane call, written to the trace files (``record: security``)."""

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['1.0', '2.2'] = '2.2'  # 2.2: with the namespace (traces.py)
    record: Literal['security'] = 'security'
    namespace: str = Field('', description="The executor's ROS namespace; '' = not recorded.")
    event: Literal['confirmation_refused', 'execute_refused', 'mavlink_refused',
                   'cancel_refused', 'refusals_summarized'] = Field(
        'confirmation_refused', description='confirmation_refused: a /executor/confirm call; '
        'execute_refused: a selection to execute whose requester signature failed; '
        'cancel_refused: a /executor/cancel_watch call; '
        'mavlink_refused: MAVLink messages dropped for their signature (require_signed); '
        'refusals_summarized: refusals over the per-window budget, counted (a flood).')
    stamp: float = Field(description='When it was refused, seconds since the epoch.')
    request_id: str = Field(description='The request the call named.')
    tool: str = Field('', description="Confirmation: the tool it named ('' = every pending "
                                      'tool).')
    tools: list[str] = Field(default_factory=list,
                             description='execute_refused: the selected tools (none dispatched); '
                                         'cancel_refused: the watched tools (none cancelled).')
    watch_id: str = Field('', description="cancel_refused: the watch id the call named ('' = "
                                          "every watch of request_id).")
    approve: bool = Field(False, description='Confirmation: approve (true) or deny.')
    claimed_operator: str = Field(description='The operator_name the caller sent (unverified).')
    key_id: str = Field(description='The key id the caller sent (unverified).')
    key_owner: str = Field('', description='Operator that key id belongs to, if any.')
    reason: Literal['unsigned', 'unknown_key', 'revoked_key', 'bad_signature', 'stale',
                    'replayed_nonce', 'malformed', 'role_not_allowed', 'no_router_key',
                    'bad_router_signature', 'replayed']
    detail: str = Field('', description='Human-readable explanation.')


class Verdict(BaseModel):
    """What the verifier decided about one confirmation call."""

    model_config = ConfigDict(extra='forbid')

    ok: bool
    operator_name: str = Field('', description='The verified operator (from the file).')
    reason: str = ''
    detail: str = ''


# -- keys ----------------------------------------------------------------------


# -- signing -------------------------------------------------------------------


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
                 clock: Callable[[], float] = time.time,
                 nonces: NonceStore | None = None) -> None:
        self._ops = {op.key_id: op for op in operators.operators}
        self._roles = operators.roles
        self._safety_tools = set(operators.safety_tools)
        self._safety_roles = set(operators.safety_cancel_roles)
        self._config_roles = set(operators.config_roles)
        self._keys = keys
        self._risk_of = risk_of
        self.max_age_s = max_age_s
        self._clock = clock
        # used nonces, kept twice the longest freshness window in use (on disk when a file
        # is given: a restart forgets none, common/nonces.py)
        self.nonces = nonces if nonces is not None else NonceStore(None, 2 * max_age_s, clock)
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path, risk_of: Callable[[str], str], max_age_s: float = 30.0,
                  clock: Callable[[], float] = time.time,
                  nonces: NonceStore | None = None) -> 'ConfirmationVerifier':
        """Load the operators file and every active key (ConfigError on a bad key file)."""
        data = load_operators_file(path) if path.exists() else OperatorsFile()
        keys = {op.key_id: read_key(key_path(path, op)) for op in data.operators
                if not op.revoked}
        return cls(data, keys, risk_of, max_age_s, clock, nonces)

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
                       max_age_s: float | None = None, policy: str = '',
                       max_tools: int = 0) -> Verdict:
        """Decide whether a selection to execute was asked for by an operator who may ask.

        The role must cover the risk class of every tool of the selection (so in
        particular the highest); the signature covers the request id and text and the
        policy and tool bound asked for, not the tools, which are the router's choice
        (the router signs those). ``max_age_s`` defaults to the verifier's.
        """
        return self._verify(
            lambda: execute_payload(request_id, request_text, True, timestamp, nonce, key_id,
                                    policy, max_tools),
            timestamp, nonce, key_id, signature, list(tools), 'dispatch', max_age_s)

    def verify_cancel(self, watch_id: str, request_id: str, timestamp: float, nonce: str,
                      key_id: str, signature: str, tools: Iterable[str]) -> Verdict:
        """Decide a watch cancellation; ``tools`` are the actions of the watches it would end.

        The role must cover the risk class of every such tool (as for an approval), and a
        safety tool (``safety_tools``: land, return_to_home, hold_position, emergency_stop)
        needs a role of ``safety_cancel_roles`` (pilot): a failsafe is not for anyone to end.
        """
        def safety(op: Operator, wanted: list[str]) -> str:
            hits = sorted({t for t in wanted if t in self._safety_tools})
            if hits and op.role not in self._safety_roles:
                return (f'role {op.role} may not cancel a watch of the safety action '
                        f'{", ".join(hits)} (needs {", ".join(sorted(self._safety_roles))})')
            return ''

        return self._verify(
            lambda: cancel_payload(watch_id, request_id, timestamp, nonce, key_id),
            timestamp, nonce, key_id, signature, list(tools), 'cancel a watch of', None, safety)

    def verify_config(self, node: str, changes: Mapping[str, Any], timestamp: float,
                      nonce: str, key_id: str, signature: str) -> Verdict:
        """Decide a signed run-time configuration change of ``node`` (its full name).

        Only a role of ``config_roles`` (admin) may change a configuration; the values are
        checked by the router after this (routing/signed_config.py).
        """
        def admin(op: Operator, _tools: list[str]) -> str:
            if op.role not in self._config_roles:
                return (f'role {op.role} may not change the configuration (needs '
                        f'{", ".join(sorted(self._config_roles)) or "a role of config_roles"})')
            return ''

        return self._verify(
            lambda: config_payload(node, changes, timestamp, nonce, key_id),
            timestamp, nonce, key_id, signature, [], 'configure', None, admin)

    def _verify(self, payload: Callable[[], bytes], timestamp: float, nonce: str, key_id: str,
                signature: str, tools: list[str], verb: str,
                max_age_s: float | None = None,
                extra: Callable[[Operator, list[str]], str] | None = None) -> Verdict:
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
            self.nonces.keep_s = max(self.nonces.keep_s, 2 * window)
            if not self.nonces.take(nonce):
                return Verdict(ok=False, reason='replayed_nonce', detail='nonce used before')
        allowed = set(self._roles.get(op.role, []))
        refused = [t for t in tools if self._risk_of(t) not in allowed]
        if refused:
            return Verdict(ok=False, reason='role_not_allowed', operator_name=op.name,
                           detail=f'role {op.role} may not {verb} '
                                  + ', '.join(f'{t} ({self._risk_of(t)})' for t in refused))
        more = extra(op, tools) if extra is not None else ''
        if more:
            return Verdict(ok=False, reason='role_not_allowed', operator_name=op.name,
                           detail=more)
        return Verdict(ok=True, operator_name=op.name)

    def owner(self, key_id: str) -> str:
        """Name of the operator a key id belongs to ('' if none)."""
        op = self._ops.get(key_id)
        return op.name if op else ''
