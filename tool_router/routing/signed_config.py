"""Signed run-time changes of the router's configuration (pure: no rclpy).

A node's parameter services are open to every process on the DDS domain, so the router's
parameters are fixed at start (:mod:`tool_router.common.param_doors`). An administrator
changes what the running router routes with through ``tool-router config set NAME=VALUE ...
--operator NAME``: the router's ``~/set_config`` service (``srv/SetConfig.srv``) applies a
change only when

1. it is signed by an operator key of the router's operators file whose role is one of
   ``config_roles`` (``admin``), fresh (30 s), with a nonce never used before (kept on disk:
   a restart forgets none) -- :meth:`tool_router.executor.auth.ConfirmationVerifier.verify_config`;
2. every name is one :func:`signed_names` allows: the policy sections (``lcr.threshold``,
   ``llm.url``, ...), and the core fields the running router applies from the next request on
   (``policy``, ``max_tools``, ``max_text_length``, ``executor_ack_timeout_s``,
   ``state_questions``, ``question_probe``, ``diagnostics_period_s``). What needs another
   model, index, topic, thread pool or key (``model``, ``catalog``, ``chroma_*``,
   ``serving.*``, topics, key files, ``operators_file``) still needs a restart;
3. the changed configuration validates and builds (:func:`staged`, then the router's
   ``prepare``): nothing changes otherwise.

Each decision is a :class:`ConfigChange` line of the node's journal
(``$ROS_HOME/tool_router/config_changes/<node>.jsonl``, written and fsync'd **before** the change
is applied; a journal that cannot be written refuses the change). A change lasts until the
process ends: a lifecycle cleanup and configure keeps it; a restart reads the params file again
(put a change that should stay there). docs/SECURITY.md, "Signed configuration changes".
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tool_router.common.errors import ConfigError, first_error
from tool_router.common.param_doors import (RESTART, flatten, named_with_close_match, section,
                                            set_dotted)
from tool_router.common.paths import ros_home
from tool_router.routing.config import BaseRouterConfig, router_doors

# The freshness window of a signed change (seconds between signing and arrival).
MAX_AGE_S = 30.0
# Refusals written one by one per window; the rest are counted in one summary line.
REFUSALS_PER_WINDOW = 20
REFUSAL_WINDOW_S = 10.0
# A refusal records at most this many of the names asked, each value cut to this many characters.
RECORDED_NAMES = 20
RECORDED_VALUE_CHARS = 200


def signed_names(config: BaseRouterConfig) -> frozenset[str]:
    """Top-level names a signed change may set (a section covers its dotted names)."""
    return router_doors(type(config).registry).signed


def node_slug(fully_qualified_name: str) -> str:
    """A file name for a node (``/uav1/router_node`` -> ``uav1.router_node``)."""
    return fully_qualified_name.strip('/').replace('/', '.') or 'router_node'


def default_config_dir() -> Path:
    """``$ROS_HOME/tool_router/config_changes``."""
    return ros_home() / 'tool_router' / 'config_changes'


def get_dotted(tree: Mapping[str, Any], name: str) -> Any:
    """The value of the dotted ``name`` in the nested dict ``tree`` (a known name)."""
    for part in name.split('.'):
        tree = tree[part]
    return tree


def staged(config: BaseRouterConfig, changes: Mapping[str, Any]
           ) -> tuple[BaseRouterConfig, dict[str, tuple[Any, Any]]]:
    """``config`` with ``changes`` (dotted names) applied, and what changed (old, new).

    ConfigError, naming every problem name, when a name is unknown or needs a restart, or
    when the result does not validate; nothing is changed either way.
    """
    if not changes:
        raise ConfigError('no change given', hint='tool-router config set NAME=VALUE ...')
    current = config.model_dump(mode='json')
    known = set(flatten(current))
    unknown = sorted(n for n in changes if n not in known)
    if unknown:
        raise ConfigError(f'unknown parameter {named_with_close_match(unknown, known)}',
                          hint='every name: config/router.yaml')
    allowed = signed_names(config)
    fixed = sorted(n for n in changes if section(n) not in allowed)
    if fixed:
        verb = 'needs' if len(fixed) == 1 else 'need'
        raise ConfigError(f'{", ".join(fixed)} {verb} another model, index, topic, thread pool '
                          'or key: not changed while the router runs, signed or not',
                          hint=RESTART)
    merged = json.loads(json.dumps(current))
    diff: dict[str, tuple[Any, Any]] = {}
    for name, value in changes.items():
        old = get_dotted(current, name)
        if old != value:
            diff[name] = (old, value)
        set_dotted(merged, name, value)
    try:
        new = type(config).model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(f'the changed configuration does not validate: {first_error(exc)}',
                          hint='nothing was changed') from None
    return new, diff


class ConfigChange(BaseModel):
    """One line of a router's configuration journal."""

    model_config = ConfigDict(extra='forbid')

    schema_version: Literal['1.0'] = '1.0'
    record: Literal['config_change'] = 'config_change'
    event: Literal['decided', 'applied', 'failed', 'refused', 'refusals_summarized'] = Field(
        description='decided: verified and valid, written before it is applied; applied: the '
                    'router routes with it from the next request on; failed: it did not build '
                    '(nothing changed); refused: not signed by an admin, stale, replayed, or '
                    'an invalid change (nothing changed); refusals_summarized: refusals over '
                    'the per-window budget, counted.')
    stamp: float = Field(description='Seconds since the epoch.')
    node: str = Field(description="The router node's fully qualified name.")
    operator: str = Field('', description='The verified operator ("" when not verified).')
    key_id: str = Field('', description='The key id the request named.')
    nonce: str = ''
    changes: dict[str, list[Any]] = Field(
        default_factory=dict, description='name -> [old, new] (refused: [null, asked]).')
    reason: str = ''
    count: int = Field(0, description='refusals_summarized: how many were counted.')


class ConfigJournal:
    """Appends :class:`ConfigChange` lines, each fsync'd before :meth:`write` returns.

    Refusals are written one by one up to :data:`REFUSALS_PER_WINDOW` per
    :data:`REFUSAL_WINDOW_S`; beyond that they are counted and one ``refusals_summarized``
    line per window says how many and why (a keyless flood of calls costs no disk).
    """

    def __init__(self, path: Path, clock: Any = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._window_start = 0.0
        self._written = 0
        self._counted: dict[str, int] = {}

    def write(self, record: ConfigChange) -> None:
        """Append ``record`` and fsync (OSError when the disk refuses)."""
        line = record.model_dump_json() + '\n'
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode('utf-8'))
                os.fsync(fd)
            finally:
                os.close(fd)

    def refused(self, record: ConfigChange) -> bool:
        """Write a refusal within the budget (True), else count it (False); never raises."""
        now = self._clock()
        summary = None
        with self._lock:
            if now - self._window_start >= REFUSAL_WINDOW_S:
                if self._counted:
                    summary = ConfigChange(
                        event='refusals_summarized', stamp=now, node=record.node,
                        count=sum(self._counted.values()),
                        reason=', '.join(f'{r} {n}' for r, n in sorted(self._counted.items())))
                self._window_start, self._written, self._counted = now, 0, {}
            within = self._written < REFUSALS_PER_WINDOW
            if within:
                self._written += 1
            else:
                why = record.reason.split(':', 1)[0][:60]
                self._counted[why] = self._counted.get(why, 0) + 1
        try:
            if summary is not None:
                self.write(summary)
            if within:
                self.write(record)
        except OSError:
            return False
        return within


def asked_record(asked: Mapping[str, Any]) -> dict[str, list[Any]]:
    """What a refusal records of the change asked for: name -> [None, value], bounded.

    At most :data:`RECORDED_NAMES` names, names and values cut to :data:`RECORDED_VALUE_CHARS`
    (a value that JSON cannot write is recorded as its repr): a refused call of a keyless
    process must not make the journal line as large as the message.
    """
    out: dict[str, list[Any]] = {}
    for name, value in list(asked.items())[:RECORDED_NAMES]:
        try:
            text = json.dumps(value)
            kept = value if len(text) <= RECORDED_VALUE_CHARS else text[:RECORDED_VALUE_CHARS]
        except (TypeError, ValueError):
            kept = repr(value)[:RECORDED_VALUE_CHARS]
        out[str(name)[:RECORDED_VALUE_CHARS]] = [None, kept]
    return out


def change_lines(diff: Mapping[str, tuple[Any, Any]]) -> list[str]:
    """``name: old -> new`` for each change (JSON values), sorted by name."""
    return [f'{name}: {json.dumps(old)} -> {json.dumps(new)}'
            for name, (old, new) in sorted(diff.items())]
