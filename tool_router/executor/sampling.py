"""Typed sensor readings for condition watches (pure): :class:`Reading` and the samplers.

A watch compares a predicate against a :class:`Reading` -- one sensor's values at one moment,
with where they came from. A :class:`Sampler` returns one or raises :class:`SensorReadError`.
Two kinds:

* :class:`TextSampler` calls a sensor's binding through a dispatcher whose answer is text (a ROS
  ``std_srvs/Trigger`` service answers a human line plus ``reading: {json}``): the one place that
  parses a reading out of text;
* a backend with typed telemetry implements :meth:`Sampler.read` itself (the MAVLink link,
  :class:`tool_router.executor.mavlink.MavlinkSampler`), so nothing is printed and parsed back.

:class:`BindingSampler` sends each sensor to the sampler of its binding's kind.
"""
from __future__ import annotations

import time
from typing import Callable, Mapping, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.conditions import decode_reading
from tool_router.common.errors import ToolRouterError
from tool_router.executor.dispatch import Binding, BindingKind, Dispatcher

Value = float | int | bool | str | None


class SensorReadError(ToolRouterError):
    """A sensor could not be read (unreachable, refused, no reading, or no fresh telemetry)."""


class Reading(BaseModel):
    """One sensor's values at one moment: what a watch's predicate is compared against."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    sensor: str = Field(description='The catalog sensor tool read.')
    values: dict[str, Value] = Field(description='Flat values, e.g. {"battery_pct": 24.9}.')
    stamp: float = Field(description='When it was read, seconds since the epoch.')
    source: str = Field('', description='Which endpoint answered (e.g. "mavlink:battery").')


class Sampler(Protocol):
    """Reads one sensor tool."""

    def read(self, sensor: str) -> Reading:
        """The sensor's current reading; raise SensorReadError when it has none."""
        ...


class TextSampler:
    """Reads a sensor by dispatching its binding and parsing the answer's ``reading:`` line."""

    def __init__(self, dispatcher: Dispatcher, bindings: Mapping[str, Binding],
                 timeout_s: float, clock: Callable[[], float] = time.time) -> None:
        self._dispatcher = dispatcher
        self._bindings = bindings
        self.timeout_s = timeout_s
        self._clock = clock

    def read(self, sensor: str) -> Reading:
        """The sensor's reading; SensorReadError when unbound, failing or without a reading."""
        binding = self._bindings.get(sensor)
        if binding is None or binding.kind not in (BindingKind.TRIGGER, BindingKind.SETBOOL,
                                                   BindingKind.CALL,
                                                   BindingKind.MAVLINK):
            raise SensorReadError(f'{sensor} has no service binding to read it through')
        result = self._dispatcher.dispatch(sensor, binding, 'watch', '', self.timeout_s)
        if not result.ok:
            raise SensorReadError(f'{sensor}: {result.message}')
        values = decode_reading(result.message)
        if values is None:
            raise SensorReadError(f'{sensor} answered without a reading: line')
        return Reading(sensor=sensor, values=values, stamp=self._clock(), source=binding.spec)


class BindingSampler:
    """Sends each sensor to the sampler for its binding's kind (default: ``fallback``)."""

    def __init__(self, bindings: Mapping[str, Binding], fallback: Sampler,
                 by_kind: Mapping[BindingKind, Sampler] | None = None) -> None:
        self._bindings = bindings
        self._fallback = fallback
        self._by_kind = dict(by_kind or {})

    def read(self, sensor: str) -> Reading:
        """The reading from the sampler of ``sensor``'s binding kind."""
        binding = self._bindings.get(sensor)
        sampler = self._by_kind.get(binding.kind, self._fallback) if binding else self._fallback
        return sampler.read(sensor)
