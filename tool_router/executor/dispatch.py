"""Bindings (tool -> ROS endpoint), execution modes and the dispatcher interface.

A binding is written as a short string in ``config/executor.yaml``:

* ``trigger:/sim/battery_status``  - call a std_srvs/srv/Trigger service
* ``setbool:/sim/spotlight``       - call a std_srvs/srv/SetBool service; ``data`` is
  ``false`` when the request text asks to stop / switch off (see :func:`setbool_value`),
  or fixed with ``setbool:/sim/spotlight=true``
* ``call:/sim/tool_call``          - call a tool_router/srv/ToolCall service with the tool's
  name and the arguments read from the request (:func:`call_arguments`; heights,
  coordinates, speeds, headings, durations); a required argument that the request does
  not give is refused before anything is sent. ``=true|false`` fixes ``on`` as for setbool
* ``topic:/payload/commands``      - publish a std_msgs/String (JSON) on a topic
* ``mavlink:takeoff``              - a MAVLink command or telemetry reading over the
  executor's MAVLink link (names in :mod:`.mavlink_spec`; docs/MAVLINK.md)
* ``dry_run``                      - never executed, traced as ``dry_run``
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import ConfigError
from tool_router.executor.arguments import extract, takes_arguments

# tools with an on/off argument (``on`` of ToolCall, ``data`` of SetBool)
ON_OFF_TOOLS = ('spotlight', 'video_recorder', 'area_mapping')

TOPIC_NAME = re.compile(r'^/?[A-Za-z_~{][A-Za-z0-9_/{}~]*$')
OFF_WORDS = re.compile(r'\b(off|stop|stops|stopping|end|disable|deactivate|halt|cease|kill)\b',
                       re.I)


class Mode(str, Enum):
    """Global execution mode of the executor."""

    EXECUTE = 'execute'
    DRY_RUN = 'dry_run'
    SHADOW = 'shadow'


class BindingKind(str, Enum):
    """Kind of endpoint a tool is bound to."""

    TRIGGER = 'trigger'
    SETBOOL = 'setbool'
    CALL = 'call'
    TOPIC = 'topic'
    MAVLINK = 'mavlink'
    DRY_RUN = 'dry_run'


class Binding(BaseModel):
    """One tool's endpoint."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    kind: BindingKind = Field(description='trigger, setbool, call, topic, mavlink or dry_run.')
    name: str = Field('', description='Service or topic name; empty for dry_run.')
    value: bool | None = Field(None, description='Fixed SetBool data / ToolCall on; None = from '
                                                 'the request.')

    @property
    def spec(self) -> str:
        """The binding written back as its config string."""
        if self.kind is BindingKind.DRY_RUN:
            return 'dry_run'
        fixed = '' if self.value is None else f'={str(self.value).lower()}'
        return f'{self.kind.value}:{self.name}{fixed}'


def parse_binding(spec: str) -> Binding:
    """Parse ``kind:name[=true|false]`` or ``dry_run``; raise ConfigError when malformed."""
    text = spec.strip()
    if text == 'dry_run':
        return Binding(kind=BindingKind.DRY_RUN)
    kind, sep, rest = text.partition(':')
    if not sep or kind not in {k.value for k in BindingKind} - {'dry_run'}:
        raise ConfigError(f'binding {spec!r} must be trigger:NAME, setbool:NAME[=true|false], '
                          'call:NAME[=true|false], topic:NAME, mavlink:NAME or dry_run')
    if kind == 'mavlink':
        from tool_router.executor.mavlink_spec import binding_names

        if rest not in binding_names():
            raise ConfigError(f'binding {spec!r}: {rest!r} is not a MAVLink binding; one of '
                              + ', '.join(binding_names()))
        return Binding(kind=BindingKind.MAVLINK, name=rest)
    name, eq, fixed = rest.partition('=')
    if not TOPIC_NAME.match(name):
        raise ConfigError(f'binding {spec!r}: {name!r} is not a valid ROS name')
    value = None
    if eq:
        if kind not in ('setbool', 'call') or fixed.lower() not in ('true', 'false'):
            raise ConfigError(f'binding {spec!r}: only setbool and call take =true or =false')
        value = fixed.lower() == 'true'
    return Binding(kind=BindingKind(kind), name=name, value=value)


def setbool_value(binding: Binding, request_text: str) -> bool:
    """SetBool data for a request: the fixed value, else False when the text says off/stop."""
    if binding.value is not None:
        return binding.value
    return OFF_WORDS.search(request_text) is None


def call_arguments(tool: str, binding: Binding, request_text: str) -> dict[str, float | bool]:
    """The arguments a ``call:`` binding sends for ``tool`` (ToolCall field -> value).

    Values come from :func:`tool_router.executor.arguments.extract` (ArgumentError when a
    required one is missing: the caller refuses, nothing is sent); an on/off tool gets
    ``on`` as :func:`setbool_value` reads it.
    """
    values: dict[str, float | bool] = {}
    if takes_arguments(tool):
        found = extract(tool, request_text).model_dump(exclude_none=True, exclude={'source'})
        values.update({k: float(v) for k, v in found.items()})
    if tool in ON_OFF_TOOLS:
        values['on'] = setbool_value(binding, request_text)
    return values


@dataclass(frozen=True)
class DispatchResult:
    """What one endpoint call produced."""

    ok: bool
    message: str
    # '' | endpoint_unreachable | endpoint_ambiguous | call_timeout | call_failed | internal_error
    failure_mode: str = ''


class Dispatcher(Protocol):
    """Performs the call a binding describes (the ROS implementation lives in the node)."""

    def dispatch(self, tool: str, binding: Binding, request_id: str, request_text: str,
                 timeout_s: float) -> DispatchResult:
        """Call the endpoint and wait at most ``timeout_s`` seconds for its answer."""
        ...
