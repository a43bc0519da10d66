"""Used nonces that survive a restart: a signed request or confirmation is taken once, ever.

The verifier refuses a nonce it has seen (a replay). Kept only in memory, a restart forgot
them, and a signature captured before it could be replayed within its freshness window. A
:class:`NonceStore` also appends each nonce to a file (one ``{"nonce":..., "at":...}`` line,
written and fsync'd before the signature counts as verified) and reads the file back when
the executor starts. Nonces older than ``keep_s`` (twice the longest freshness window:
their signatures are refused as stale anyway) are dropped when the file is read, which
rewrites it without them (atomically), so the file stays as small as the window allows.
The executor's verifiers and the vehicle's :class:`~tool_router.common.vehicle_calls.CallGuard`
both keep theirs here.
"""
from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable


class NonceStore:
    """The nonces seen within ``keep_s``; appended to ``path`` (None: memory only)."""

    def __init__(self, path: Path | None, keep_s: float,
                 clock: Callable[[], float] = time.time, fsync: bool = True,
                 max_nonces: int = 100_000) -> None:
        self.path = path
        self.keep_s = keep_s
        self.max_nonces = max_nonces  # within the window; beyond it the oldest go first
        self._clock = clock
        self._fsync = fsync
        self._seen: OrderedDict[str, float] = OrderedDict()  # in the order taken
        self._lock = threading.Lock()
        self.unwritten = 0  # nonces that could not be written (kept in memory only)
        if path is not None:
            self._load(path)

    def _load(self, path: Path) -> None:
        now = self._clock()
        try:
            lines = path.read_text(encoding='utf-8', errors='replace').splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            try:
                item = json.loads(line)
                nonce, at = str(item['nonce']), float(item['at'])
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line (killed writer)
            if now - at <= self.keep_s:
                self._seen[nonce] = at
        self._seen = OrderedDict(sorted(self._seen.items(), key=lambda item: item[1]))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + '.tmp')
        tmp.write_text(''.join(json.dumps({'nonce': n, 'at': t}) + '\n'
                               for n, t in self._seen.items()), encoding='utf-8')
        os.replace(tmp, path)

    def __contains__(self, nonce: object) -> bool:
        with self._lock:
            return nonce in self._seen

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def take(self, nonce: str) -> bool:
        """Record ``nonce`` as used now; False when it was used before (a replay).

        The line is on disk before this returns True. When it cannot be written (a full
        disk) the nonce is still kept in memory (``unwritten`` counts it): refusing the
        request would turn a full disk into a refused emergency stop.
        """
        now = self._clock()
        with self._lock:
            while self._seen and now - next(iter(self._seen.values())) > self.keep_s:
                self._seen.popitem(last=False)
            if nonce in self._seen:
                return False
            self._seen[nonce] = now
            while len(self._seen) > self.max_nonces:
                self._seen.popitem(last=False)
            if self.path is not None:
                try:
                    self._append(json.dumps({'nonce': nonce, 'at': now}) + '\n')
                except OSError:
                    self.unwritten += 1
        return True

    def _append(self, line: str) -> None:
        assert self.path is not None
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode('utf-8'))
            if self._fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
