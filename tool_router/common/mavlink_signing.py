"""MAVLink 2 message signing (pure): the shared key file and the check of a received signature.

A signed MAVLink 2 frame ends with a 13-byte block: the sender's link id (1 byte), a timestamp
(6 bytes, 10 microsecond units since 2015-01-01 UTC) and the first 6 bytes of
SHA-256(secret key + the frame up to the signature itself). Both ends hold the same 32-byte
secret key; here it lives in a key file like the operator keys (32 random bytes as hex, mode
0600, checked by :func:`tool_router.common.signing.check_key_file`).

:class:`SignatureChecker` decides about one received signed frame, in this order: the
signature must match the key (``bad_signature``), then its timestamp must be newer than the
last one accepted on the same stream -- (link id, system, component) -- (``replayed``), and a
stream never seen before must not be more than a minute behind our own clock (``stale``).
The order matters: pymavlink 2.4's own check records a frame's timestamp *before* comparing
the signature, so a forged frame with a wrong signature and a far-future timestamp makes
every later genuine frame of that stream look replayed (a denial of service by anyone on the
link). :func:`install` puts this checker in place of pymavlink's on a ``MAVLink`` object.
"""
from __future__ import annotations

import hashlib
import hmac
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tool_router.common.errors import ConfigError
from tool_router.common.signing import read_key, write_key

KEY_BYTES = 32
SIGNATURE_BLOCK = 13
EPOCH_2015 = 1_420_070_400
NEW_STREAM_WINDOW = 60 * 100_000  # a new stream may be one minute behind (10 us units)
MAVLINK2_MARKER = 0xFD
IFLAG_SIGNED = 0x01


def signing_timestamp(now: float | None = None) -> int:
    """Now as a MAVLink signing timestamp (10 microsecond units since 2015-01-01 UTC)."""
    seconds = (time.time() if now is None else now) - EPOCH_2015
    return int(max(seconds, 0.0) * 100_000)


def read_mavlink_key(path: str | Path) -> bytes:
    """The 32-byte secret of a MAVLink signing key file (0600, hex); ConfigError otherwise."""
    key = read_key(path)
    if len(key) != KEY_BYTES:
        raise ConfigError(f'a MAVLink signing key is {KEY_BYTES} bytes, this file holds '
                          f'{len(key)}', where=str(path),
                          hint='tool-router mavlink-key create FILE writes one')
    return key


def create_mavlink_key(path: str | Path) -> None:
    """Write a new random 32-byte key file, mode 0600 (refuses to overwrite one)."""
    write_key(Path(path))


@dataclass(frozen=True)
class FrameHeader:
    """What a raw MAVLink frame says about itself (read before any check)."""

    version: int
    seq: int
    system: int
    component: int
    msgid: int
    signed: bool
    link_id: int = 0
    timestamp: int = 0


def frame_header(frame: bytes) -> FrameHeader | None:
    """The header fields of a raw MAVLink 1 or 2 frame; None when it is too short to tell."""
    if len(frame) >= 10 and frame[0] == MAVLINK2_MARKER:
        _, length, incompat, _, seq, system, component, lo, mid, hi = struct.unpack(
            '<BBBBBBBBBB', frame[:10])
        signed = bool(incompat & IFLAG_SIGNED) and len(frame) >= 10 + length + 2 + SIGNATURE_BLOCK
        link_id = timestamp = 0
        if signed:
            link_id = frame[-SIGNATURE_BLOCK]
            timestamp = int.from_bytes(frame[-12:-6], 'little')
        return FrameHeader(2, seq, system, component, lo | (mid << 8) | (hi << 16), signed,
                           link_id, timestamp)
    if len(frame) >= 6 and frame[0] == 0xFE:
        return FrameHeader(1, frame[2], frame[3], frame[4], frame[5], False)
    return None


class SignatureChecker:
    """Checks received signed frames against one key; remembers each stream's last timestamp."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f'MAVLink signing key must be {KEY_BYTES} bytes')
        self._key = key
        self._streams: dict[tuple[int, int, int], int] = {}
        self.last_reason = ''

    def check(self, frame: bytes, local_timestamp: int) -> str:
        """'' when ``frame`` is correctly signed and fresh, else why not.

        ``local_timestamp`` is our own signing clock (the newer of our clock and every
        timestamp accepted so far), against which a new stream is judged.
        """
        header = frame_header(frame)
        if header is None or not header.signed:
            self.last_reason = 'unsigned'
            return self.last_reason
        expected = hashlib.sha256(self._key + frame[:-6]).digest()[:6]
        if not hmac.compare_digest(expected, frame[-6:]):
            self.last_reason = 'bad_signature'
            return self.last_reason
        stream = (header.link_id, header.system, header.component)
        last = self._streams.get(stream)
        if last is not None and header.timestamp <= last:
            self.last_reason = 'replayed'
            return self.last_reason
        if last is None and header.timestamp + NEW_STREAM_WINDOW < local_timestamp:
            self.last_reason = 'stale'
            return self.last_reason
        self._streams[stream] = header.timestamp
        self.last_reason = ''
        return ''

    def forget(self, system: int, component: int) -> None:
        """Drop a sender's streams (after it rebooted, its clock may restart)."""
        for stream in [s for s in self._streams if s[1:] == (system, component)]:
            del self._streams[stream]


def install(mav: Any, key: bytes, *, sign_outgoing: bool, link_id: int,
            accept_unsigned: Callable[[Any, int], bool]) -> SignatureChecker:
    """Sign with ``key`` on a pymavlink ``MAVLink`` object, check with :class:`SignatureChecker`.

    ``accept_unsigned(mav, msgid)`` decides about a frame without a valid signature (pymavlink
    calls it for unsigned frames and for frames whose check failed); returning False drops the
    frame as ``BAD_DATA`` ("Invalid signature").
    """
    checker = SignatureChecker(key)
    signing = mav.signing
    signing.secret_key = key
    signing.sign_outgoing = sign_outgoing
    signing.link_id = link_id
    signing.timestamp = max(int(getattr(signing, 'timestamp', 0) or 0), signing_timestamp())
    signing.allow_unsigned_callback = accept_unsigned

    def check_signature(msgbuf: Any, src_system: int, src_component: int) -> bool:
        frame = bytes(msgbuf)
        if checker.check(frame, signing.timestamp):
            return False
        header = frame_header(frame)
        if header is not None:
            signing.timestamp = max(signing.timestamp, header.timestamp)
        return True

    mav.check_signature = check_signature
    return checker
