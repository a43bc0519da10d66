"""Condition watches: wait for a predicate over a sensor, then fire the gated action once.

Pure logic, no ROS. A :class:`WatchManager` holds the armed watches of one
executor process. :meth:`WatchManager.tick` (called periodically by the node)
reads each sensor that an armed watch needs once, through an injected
:class:`~tool_router.executor.sampling.Sampler` (a typed
:class:`~tool_router.executor.sampling.Reading`), and for each watch:

* past its time-to-live -> ``expired`` (nothing runs);
* predicate holds       -> ``fired``: the record is emitted first, then the
  injected ``fire`` callback runs the gated action through the normal pipeline,
  where permissions and confirmations are decided *now*, not at arming time;
  when ``fire`` answers False (the action could not be taken: a full disk, a
  queue at shutdown) the watch is armed again, not used up, and retried after
  ``retry_s`` while its condition holds;
* otherwise it stays armed.

Each state change is handed to ``emit`` as a
:class:`~tool_router.executor.traces.WatchRecord`. Watches live in memory
only: a restarted executor has none (the node traces the ones it finds left
open in its trace files as cancelled).
"""
from __future__ import annotations

import threading
import time
import uuid
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import ToolRouterError
from tool_router.common.conditions import CLOCK, Predicate
from tool_router.executor.sampling import Sampler, SensorReadError
from tool_router.executor.traces import WatchRecord


class WatchLimitError(ToolRouterError):
    """Too many watches are armed already."""


class TimePassedError(ToolRouterError):
    """A clock-time condition names a time of today (UTC) that has already passed."""


def time_to_wait(predicate: Predicate, now: float) -> float | None:
    """Seconds until a clock predicate holds (None: never today); 0 for a sensor predicate.

    ``elapsed_s`` counts from arming, so it holds after its threshold; ``clock_s`` holds at its
    time of day (UTC) and never again today once that time has passed.
    """
    if predicate.sensor != CLOCK or not isinstance(predicate.threshold, float):
        return 0.0
    if predicate.field == 'elapsed_s':
        return predicate.threshold
    wait = predicate.threshold - now % 86400.0
    return wait if wait >= 0 else None


class Watch(BaseModel):
    """One armed (or ended) watch."""

    model_config = ConfigDict(extra='forbid')

    watch_id: str
    request_id: str
    tool: str = Field(description='The gated tool.')
    request_text: str = Field('', description='The request, passed to the action when it fires.')
    predicate: Predicate
    armed_at: float
    expires_at: float
    state: Literal['armed', 'fired', 'expired', 'cancelled'] = 'armed'
    samples: int = 0
    value: float | bool | str | None = None
    last_error: str = Field('', description='Why the last sample failed, if it did.')
    ended_at: float | None = None
    reason: str = ''
    retries: int = Field(0, description='Times it fired and its action could not be taken.')
    not_before: float = Field(0.0, description='No sample is evaluated before this instant.')
    held_since: float | None = Field(
        None, description='When the comparison of a held condition ("for 5 s") began to hold '
                          'without a break (None: not holding).')


class WatchManager:
    """Arms, samples, fires, expires and cancels watches; thread-safe."""

    def __init__(self, sampler: Sampler, fire: Callable[[Watch], bool | None],
                 emit: Callable[[WatchRecord], None], *, ttl_s: float = 600.0,
                 max_watches: int = 32, keep_ended: int = 50, retry_s: float = 1.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.sampler = sampler
        self.fire = fire
        self.retry_s = retry_s
        self.emit = emit
        self.ttl_s = ttl_s
        self.max_watches = max_watches
        self.keep_ended = keep_ended
        self.clock = clock
        self._watches: dict[str, Watch] = {}
        self._lock = threading.Lock()

    # -- arming and listing -------------------------------------------------
    def arm(self, request_id: str, tool: str, predicate: Predicate, request_text: str = '',
            ttl_s: float | None = None) -> Watch:
        """Arm a watch (emits 'armed'); raise WatchLimitError when ``max_watches`` are armed.

        A time condition lives for its wait plus the time-to-live ("after 20 minutes" is not
        expired at 10); a clock time that has passed today raises TimePassedError (it would hold
        at once, or only tomorrow).
        """
        now = self.clock()
        wait = time_to_wait(predicate, now)
        if wait is None:
            at = now % 86400.0
            raise TimePassedError(
                f'{predicate.written or predicate.describe()} has passed today '
                f'(it is {int(at // 3600):02d}:{int(at % 3600 // 60):02d} UTC)',
                hint='give a later time of today (UTC) or a delay ("in 10 minutes")')
        ttl = (self.ttl_s if ttl_s is None else ttl_s) + wait
        with self._lock:
            if len(self.armed()) >= self.max_watches:
                raise WatchLimitError(f'{self.max_watches} watches are armed already',
                                      hint='cancel one: tool-router watch cancel WATCH_ID')
            watch = Watch(watch_id=f'w-{uuid.uuid4().hex[:10]}', request_id=request_id,
                          tool=tool, request_text=request_text, predicate=predicate,
                          armed_at=now, expires_at=now + ttl)
            self._watches[watch.watch_id] = watch
            record = self._record(watch, 'armed', now)
        self.emit(record)
        return watch

    def armed(self) -> list[Watch]:
        """Watches still waiting, oldest first."""
        return [w for w in self._watches.values() if w.state == 'armed']

    def snapshot(self, include_ended: bool = False) -> list[Watch]:
        """Copies of the watches (armed only, or also the recently ended ones)."""
        with self._lock:
            return [w.model_copy() for w in self._watches.values()
                    if include_ended or w.state == 'armed']

    # -- ending ---------------------------------------------------------------
    def cancel(self, watch_id: str = '', request_id: str = '',
               reason: str = 'cancelled by the operator') -> list[Watch]:
        """Cancel one watch by id, or every watch of a request; return those cancelled."""
        if not watch_id and not request_id:
            return []
        with self._lock:
            hits = [w for w in self.armed()
                    if (watch_id and w.watch_id == watch_id)
                    or (request_id and w.request_id == request_id)]
            records = [self._end(w, 'cancelled', reason) for w in hits]
        for record in records:
            self.emit(record)
        return [w.model_copy() for w in hits]

    def cancel_all(self, reason: str) -> list[Watch]:
        """Cancel every armed watch (shutdown)."""
        with self._lock:
            hits = self.armed()
            records = [self._end(w, 'cancelled', reason) for w in hits]
        for record in records:
            self.emit(record)
        return hits

    # -- sampling ---------------------------------------------------------------
    def tick(self) -> list[Watch]:
        """Sample once: expire, evaluate, fire. Returns the watches fired by this tick."""
        now = self.clock()
        records: list[WatchRecord] = []
        with self._lock:
            for w in self.armed():
                if now >= w.expires_at:
                    records.append(self._end(w, 'expired', f'condition not met within '
                                                           f'{w.expires_at - w.armed_at:g} s'))
            sensors = sorted({w.predicate.sensor for w in self.armed()})
        for record in records:
            self.emit(record)
        readings: dict[str, dict[str, Any] | str] = {}
        for sensor in sensors:
            if sensor == CLOCK:
                continue
            try:
                readings[sensor] = self.sampler.read(sensor).values
            except SensorReadError as exc:
                readings[sensor] = exc.what
        fired: list[Watch] = []
        with self._lock:
            due: list[tuple[Watch, WatchRecord]] = []
            settled: list[WatchRecord] = []
            now = self.clock()
            for w in self.armed():
                reading = (_clock_reading(w, now) if w.predicate.sensor == CLOCK
                           else readings.get(w.predicate.sensor, 'not sampled'))
                if isinstance(reading, str):
                    w.last_error = reading
                    w.held_since = None  # a gap in the readings breaks a held condition
                    continue
                if now < w.not_before:
                    continue
                w.samples += 1
                try:
                    w.value = w.predicate.value(reading)
                    if w.predicate.either_side:
                        settled.append(self._settle(w, now))
                    holds = w.predicate.holds(reading)
                    w.last_error = ''
                except (KeyError, TypeError, ValueError) as exc:
                    w.last_error = f'reading of {w.predicate.sensor} unusable: {exc!r}'
                    w.held_since = None
                    continue
                if w.predicate.held_s:  # "for 5 s": it must hold that long without a break
                    if not holds:
                        w.held_since = None
                    else:
                        w.held_since = now if w.held_since is None else w.held_since
                        holds = now - w.held_since >= w.predicate.held_s
                if holds:
                    due.append((w, self._end(w, 'fired', f'{w.predicate.describe()} held '
                                                         f'(value {_shown(w.value)})')))
            fired = [w.model_copy() for w, _ in due]
        for record in settled:
            self.emit(record)  # the side it waits from, on disk before it fires or waits
        for (_, record), watch in zip(due, fired):
            self.emit(record)  # on disk before the action runs
            if self.fire(watch) is False:
                self._rearm(watch)
        return fired

    def _settle(self, w: Watch, now: float) -> WatchRecord:
        """Choose the side of an either-side level from ``w``'s first value; its 'armed' record.

        The caller holds the lock.
        """
        w.predicate = w.predicate.settled(w.value)
        w.reason = (f'{w.predicate.field} read {_shown(w.value)} as the watch started: waits '
                    f'for {w.predicate.describe()}')
        return self._record(w, 'armed', now)

    def _rearm(self, fired: Watch) -> None:
        """Arm ``fired`` again: its action could not be taken, so it is not used up."""
        with self._lock:
            w = self._watches.get(fired.watch_id)
            if w is None or w.state != 'fired':
                return
            now = self.clock()
            w.state, w.ended_at, w.retries = 'armed', None, w.retries + 1
            w.held_since = None
            w.not_before = now + self.retry_s
            w.reason = (f'fired but {w.tool} could not be taken; armed again (retry '
                        f'{w.retries}, next in {self.retry_s:g} s)')
            w.last_error = w.reason
            record = self._record(w, 'armed', now)
        self.emit(record)

    # -- helpers --------------------------------------------------------------
    def _end(self, w: Watch, state: Literal['fired', 'expired', 'cancelled'],
             reason: str) -> WatchRecord:
        """Mark ``w`` ended (caller holds the lock) and build its record."""
        now = self.clock()
        w.state, w.ended_at, w.reason = state, now, reason
        ended = [k for k, v in self._watches.items() if v.state != 'armed']
        for key in ended[:-self.keep_ended or None]:
            if key != w.watch_id:
                del self._watches[key]
        return self._record(w, state, now)

    @staticmethod
    def _record(w: Watch, event: Literal['armed', 'fired', 'expired', 'cancelled'],
                now: float) -> WatchRecord:
        return WatchRecord(event=event, stamp=now, watch_id=w.watch_id, request_id=w.request_id,
                           tool=w.tool, condition=w.predicate.text,
                           predicate=w.predicate.describe(), sensor=w.predicate.sensor,
                           expires=w.expires_at, samples=w.samples, value=w.value,
                           reason=w.reason)


def _clock_reading(w: Watch, now: float) -> dict[str, Any]:
    return {'elapsed_s': now - w.armed_at, 'clock_s': now % 86400.0}


def _shown(value: object) -> str:
    return f'{value:.6g}' if isinstance(value, float) else str(value)
