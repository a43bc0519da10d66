"""A vehicle endpoint's check that a call comes from the executor (pure; no ROS).

The executor signs every ToolCall it sends with its own key (the key it signs acks with:
``executor_key_file``; :func:`tool_router.common.signing.sign_call`). An endpoint that acts on
the vehicle -- the simulator's ``tool_call``, or a payload node written to the same pattern
(docs/SECURITY.md, "The vehicle's endpoints") -- holds a :class:`CallGuard` and refuses what
it does not pass: no signature, a signature by another key, a call older or newer than the
window, a nonce seen before. A process on the DDS domain without the executor's key then
cannot make the vehicle act by calling the endpoint directly, around the executor's
permissions, confirmations and trace.
"""

from __future__ import annotations

import hmac
import time
from pathlib import Path
from typing import Callable, Mapping

from tool_router.common import signing
from tool_router.common.errors import ToolRouterError
from tool_router.common.nonces import NonceStore

CALL_WINDOW_S = 30.0  # a signed call older (or newer, clock skew) than this is refused


class CallGuard:
    """Checks the executor's signature, freshness and nonce of each call (thread-safe).

    ``key_file`` is read when a call first needs it (the executor makes the key when it is
    configured, perhaps after this endpoint started) and kept once read. The used nonces are
    ``nonces`` (a :class:`~tool_router.common.nonces.NonceStore`), by default a store kept for
    twice the window (a call is fresh from ``window_s`` before its timestamp to as long after
    it): on ``nonce_file`` when given (a restarted endpoint still refuses a call it took
    before; ``OSError`` when it cannot be written), else in memory.
    """

    def __init__(self, key_file: str | Path, window_s: float = CALL_WINDOW_S,
                 clock: Callable[[], float] = time.time,
                 nonces: NonceStore | None = None,
                 nonce_file: str | Path | None = None) -> None:
        self.key_file = Path(key_file)
        self.window_s = window_s
        self._clock = clock
        self._key: bytes | None = None
        self.nonces = nonces if nonces is not None else NonceStore(
            Path(nonce_file) if nonce_file else None, 2 * window_s, clock)

    def _read_key(self) -> bytes | None:
        if self._key is None and self.key_file.is_file():
            try:
                self._key = signing.read_key(self.key_file)
            except (OSError, ValueError, ToolRouterError):
                return None
        return self._key

    def check(self, tool: str, request_id: str, values: Mapping[str, float | bool],
              timestamp: float, nonce: str, signature: str) -> str:
        """'' when the call is the executor's and fresh, else why it is refused."""
        if not signature:
            return 'unsigned: the vehicle takes calls signed by the executor only'
        key = self._read_key()
        if key is None:
            return f'no executor key at {self.key_file} to check the call against'
        now = self._clock()
        if abs(now - timestamp) > self.window_s:
            return f'stale: signed {now - timestamp:.1f} s ago (window {self.window_s:g} s)'
        expected = signing.sign(key, signing.call_payload(tool, request_id, values, timestamp,
                                                          nonce))
        if not hmac.compare_digest(expected.encode('ascii'),
                                   signature.strip().lower().encode('utf-8', 'replace')):
            return 'bad signature: not signed by the executor\'s key, or the call was changed'
        if not self.nonces.take(nonce):
            return 'replayed: this call was taken before'
        return ''
