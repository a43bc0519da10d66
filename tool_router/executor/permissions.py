"""Permission rules for the executor: allow / deny / confirm per risk class and per tool.

The file is YAML (``config/permissions.yaml``)::

    version: 1
    defaults:            # per risk class; a class not listed is denied
      none: allow
      motion: allow
      payload: allow
      critical: confirm
    tools:               # per-tool overrides (catalog names only)
      emergency_stop: confirm
    rate_limits:         # at most max_calls dispatched invocations per window_s seconds
      takeoff: {max_calls: 3, window_s: 60}

A malformed file raises :class:`~tool_router.common.errors.ConfigError` naming the
file, line and field; the executor node refuses to start with it.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from enum import Enum
from pathlib import Path
from typing import Callable, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.catalog import Catalog, Risk
from tool_router.common.errors import ConfigError, first_problem
from tool_router.common.yaml_util import line_of, load_yaml_with_lines

# The actions that make the vehicle safer, whatever else fails: on a full disk they still run
# with their record kept in memory (tool_router/executor/sink.py); every other action is refused.
SAFETY_ACTIONS = frozenset({'land', 'return_to_home', 'hold_position', 'emergency_stop'})


class Action(str, Enum):
    """What the executor does with a selected tool."""

    ALLOW = 'allow'
    DENY = 'deny'
    CONFIRM = 'confirm'


class RateLimit(BaseModel):
    """At most ``max_calls`` permitted invocations of one tool per sliding window."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    max_calls: int = Field(ge=1, description='Invocations allowed inside one window.')
    window_s: float = Field(gt=0, description='Length of the sliding window in seconds.')


class PermissionsFile(BaseModel):
    """The validated content of a permissions file."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    version: Literal[1] = Field(description='Schema version of the permissions file.')
    defaults: dict[Risk, Action] = Field(
        default_factory=dict, description='Action per risk class; a class not listed is denied.')
    tools: dict[str, Action] = Field(default_factory=dict, description='Per-tool overrides.')
    rate_limits: dict[str, RateLimit] = Field(default_factory=dict,
                                              description='Per-tool rate limits.')


class PermissionDecision(BaseModel):
    """The permission decision for one tool of one request."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    tool: str = Field(description='Tool name as received from the router.')
    action: Action = Field(description='allow, deny or confirm.')
    reason: str = Field(description='Which rule decided, in words.')
    failure_mode: str = Field('', description="'' or router_fault / permission_denied / "
                                              'rate_limited when denied.')


class RateLimiter:
    """Thread-safe sliding-window counters, one per tool."""

    def __init__(self, limits: dict[str, RateLimit],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = dict(limits)
        self._clock = clock
        self._events: dict[str, deque[float]] = {name: deque() for name in limits}
        self._lock = threading.Lock()

    def allowed(self, tool: str) -> bool:
        """Whether one more invocation of ``tool`` fits now (counts nothing)."""
        return self._take(tool, count=False)

    def acquire(self, tool: str) -> bool:
        """Count one invocation of ``tool``; False (and nothing counted) when over its limit."""
        return self._take(tool, count=True)

    def _take(self, tool: str, count: bool) -> bool:
        limit = self._limits.get(tool)
        if limit is None:
            return True
        now = self._clock()
        with self._lock:
            events = self._events[tool]
            while events and now - events[0] >= limit.window_s:
                events.popleft()
            if len(events) >= limit.max_calls:
                return False
            if count:
                events.append(now)
            return True

    def limit(self, tool: str) -> RateLimit | None:
        """The limit configured for ``tool``, if any."""
        return self._limits.get(tool)


class PermissionPolicy:
    """Decides allow / deny / confirm for tool names; unknown names are a router fault."""

    def __init__(self, rules: PermissionsFile, catalog: Catalog,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rules = rules
        self.catalog = catalog
        self._risk = {t.name: t.risk for t in catalog}
        self.limiter = RateLimiter(rules.rate_limits, clock)

    def base_action(self, tool: str) -> tuple[Action, str]:
        """The configured action for a catalog tool, without rate limits, and why."""
        if tool in self.rules.tools:
            action = self.rules.tools[tool]
            return action, f'per-tool rule: {action.value}'
        risk = self._risk[tool]
        if risk in self.rules.defaults:
            action = self.rules.defaults[risk]
            return action, f'default for risk {risk.value}: {action.value}'
        return Action.DENY, f'risk {risk.value} not listed: default deny'

    def decide(self, tool: str) -> PermissionDecision:
        """Decide one tool; a tool over its rate limit is denied.

        Deciding counts nothing: :meth:`consume` counts the invocation when it is
        dispatched, so requests that are denied or never approved cannot lock the
        operator out.
        """
        if tool not in self._risk:
            return PermissionDecision(tool=tool, action=Action.DENY, failure_mode='router_fault',
                                      reason='router fault: tool is not in the catalog')
        action, reason = self.base_action(tool)
        if action is Action.DENY:
            return PermissionDecision(tool=tool, action=action, reason=reason,
                                      failure_mode='permission_denied')
        if not self.limiter.allowed(tool):
            return PermissionDecision(tool=tool, action=Action.DENY, failure_mode='rate_limited',
                                      reason=self._limit_text(tool))
        return PermissionDecision(tool=tool, action=action, reason=reason)

    def consume(self, tool: str) -> str | None:
        """Count one invocation about to be dispatched; the denial reason when over the limit."""
        if tool not in self._risk or self.limiter.acquire(tool):
            return None
        return self._limit_text(tool)

    def _limit_text(self, tool: str) -> str:
        limit = self.limiter.limit(tool)
        assert limit is not None
        return f'rate limit: more than {limit.max_calls} per {limit.window_s:g} s'



def load_permissions(path: str | Path, catalog: Catalog) -> PermissionsFile:
    """Load and validate a permissions file against the catalog; raise ConfigError if bad."""
    path = Path(path)
    data, node = load_yaml_with_lines(path, ConfigError)
    if not isinstance(data, dict):
        raise ConfigError('top level must be a mapping with version, defaults, tools, rate_limits',
                          where=str(path))
    try:
        rules = PermissionsFile.model_validate(data)
    except pydantic.ValidationError as exc:
        problem = first_problem(exc)
        # dict keys that failed as enum values appear as "[key]" entries
        loc = [p for p in problem.loc if p != '[key]']
        line = line_of(node, loc)
        field = '.'.join(str(p) for p in loc) or '(top level)'
        more = f'; {problem.more} more error(s)' if problem.more else ''
        raise ConfigError(f'field {field}: {problem.msg}{more}',
                          where=f'{path}:{line}' if line else str(path),
                          hint='fix the permissions file; the executor refuses to start') from None
    for section in ('tools', 'rate_limits'):
        for name in getattr(rules, section):
            if name not in catalog:
                line = line_of(node, [section, name])
                raise ConfigError(f'field {section}.{name}: unknown tool {name!r}',
                                  where=f'{path}:{line}' if line else str(path),
                                  hint='use catalog tool names only')
    return rules


def default_permissions_path() -> Path:
    """The permissions file shipped with the package."""
    from tool_router.common.paths import config_path
    return config_path('permissions.yaml')
