"""MAVLink 2 signing (pure, no sockets): key files, the signature check, and pymavlink's parser.

Frames are made by pymavlink's own encoder with signing switched on, then parsed by a
receiver that uses :func:`tool_router.common.mavlink_signing.install`.
"""
from __future__ import annotations

import os

import pytest

os.environ.setdefault('MAVLINK20', '1')  # before pymavlink is first imported
from tool_router.common.errors import ConfigError
from tool_router.common.mavlink_signing import (NEW_STREAM_WINDOW, SignatureChecker,
                                                create_mavlink_key, frame_header, install,
                                                read_mavlink_key, signing_timestamp)

mavutil = pytest.importorskip('pymavlink.mavutil')
M = mavutil.mavlink
KEY = bytes(range(32))
OTHER = bytes(range(1, 33))


def sender(key=KEY, system=1, component=1, timestamp=None, link_id=0):
    mav = M.MAVLink(None, srcSystem=system, srcComponent=component)
    if key is not None:
        mav.signing.secret_key = key
        mav.signing.sign_outgoing = True
        mav.signing.link_id = link_id
        mav.signing.timestamp = signing_timestamp() if timestamp is None else timestamp
    return mav


def heartbeat(mav):
    return bytes(mav.heartbeat_encode(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_PX4, 0, 0, 3)
                 .pack(mav))


def receiver(require_signed=True):
    mav = M.MAVLink(None, srcSystem=255, srcComponent=190)
    mav.robust_parsing = True
    checker = install(mav, KEY, sign_outgoing=True, link_id=1,
                      accept_unsigned=lambda m, msgid: not require_signed)
    return mav, checker


def parse(mav, frame):
    return mav.parse_char(bytearray(frame))


def test_key_file_is_created_0600_and_read_back(tmp_path):
    path = tmp_path / 'keys' / 'mavlink.key'
    create_mavlink_key(path)
    assert (path.stat().st_mode & 0o777) == 0o600
    assert len(read_mavlink_key(path)) == 32
    with pytest.raises(FileExistsError):
        create_mavlink_key(path)


def test_key_file_readable_by_others_or_of_the_wrong_size_is_refused(tmp_path):
    path = tmp_path / 'open.key'
    path.write_text(KEY.hex())
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match='group or others'):
        read_mavlink_key(path)
    short = tmp_path / 'short.key'
    short.write_text(bytes(16).hex() + '\n')
    os.chmod(short, 0o600)
    with pytest.raises(ConfigError, match='32 bytes'):
        read_mavlink_key(short)


def test_checker_accepts_good_and_names_each_refusal():
    checker = SignatureChecker(KEY)
    now = signing_timestamp()
    good = heartbeat(sender())
    assert checker.check(good, now) == ''
    assert checker.check(good, now) == 'replayed'  # the same frame again
    assert checker.check(heartbeat(sender(OTHER)), now) == 'bad_signature'
    assert checker.check(heartbeat(sender(None)), now) == 'unsigned'
    old = heartbeat(sender(system=2, timestamp=now - NEW_STREAM_WINDOW - 100_000))
    assert checker.check(old, now) == 'stale'  # a new stream more than a minute behind us
    header = frame_header(good)
    assert (header.system, header.component, header.msgid, header.signed) == (1, 1, 0, True)


def test_receiver_drops_unsigned_and_forged_frames_as_bad_data():
    mav, checker = receiver()
    assert parse(mav, heartbeat(sender())).get_type() == 'HEARTBEAT'
    for frame, reason in ((heartbeat(sender(None)), 'unsigned'),
                          (heartbeat(sender(OTHER)), 'bad_signature')):
        msg = parse(mav, frame)
        assert msg.get_type() == 'BAD_DATA' and 'signature' in msg.reason
        assert frame_header(bytes(msg.data)) is not None
    assert checker.last_reason == 'bad_signature'


def test_optional_signing_accepts_unsigned_frames_but_says_so():
    mav, _ = receiver(require_signed=False)
    msg = parse(mav, heartbeat(sender(None)))
    assert msg.get_type() == 'HEARTBEAT' and msg.get_signed() is False
    assert parse(mav, heartbeat(sender())).get_signed() is True


def test_a_forged_far_future_frame_does_not_lock_out_the_real_sender():
    """pymavlink 2.4's own check records the timestamp before the signature: ours does not."""
    now = signing_timestamp()
    forged = heartbeat(sender(OTHER, timestamp=now + 10 ** 9))  # wrong key, far future
    genuine = heartbeat(sender(timestamp=now))
    mav, _ = receiver()
    assert parse(mav, forged).get_type() == 'BAD_DATA'
    assert parse(mav, genuine).get_type() == 'HEARTBEAT'
    plain = M.MAVLink(None, srcSystem=255, srcComponent=190)  # pymavlink's own check
    plain.robust_parsing = True
    plain.signing.secret_key = KEY
    plain.signing.timestamp = now
    plain.signing.allow_unsigned_callback = lambda m, msgid: False
    assert plain.parse_char(bytearray(forged)).get_type() == 'BAD_DATA'
    assert plain.parse_char(bytearray(genuine)).get_type() == 'BAD_DATA'  # locked out
