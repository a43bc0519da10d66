"""``tool-router sim --mavlink`` (the MAVLink simulator) and ``tool-router mavlink-key``."""
from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``sim`` and ``mavlink-key`` to the ``tool-router`` parser (pymavlink loads lazily)."""
    p = sub.add_parser('sim', help='run the MAVLink-speaking vehicle simulator (docs/MAVLINK.md)')
    p.add_argument('--mavlink', dest='connection', default='udpout:127.0.0.1:14550',
                   metavar='CONNECTION',
                   help='pymavlink connection string (default udpout:127.0.0.1:14550, where '
                        'the executor of config/executor_mavlink.yaml listens)')
    p.add_argument('--autopilot', choices=('ardupilot', 'px4'), default='ardupilot',
                   help="whose rules the simulated vehicle follows (ArduCopter's or PX4's)")
    p.add_argument('--battery', type=float, default=100.0, help='initial charge, %%')
    p.add_argument('--drain', type=float, default=0.05,
                   help='battery drain while armed on the ground, %%/s (three times in the air)')
    p.add_argument('--min-arm-battery', type=float, default=20.0,
                   help='arming is refused below this charge, %%')
    p.add_argument('--home-amsl', type=float, default=488.0,
                   help='home altitude above mean sea level, m')
    p.add_argument('--system', type=int, default=1, help='MAVLink system id')
    p.add_argument('--signing-key', default='', metavar='FILE',
                   help='MAVLink 2 signing key file (0600): sign everything sent')
    p.add_argument('--require-signed', action='store_true',
                   help='refuse unsigned or wrongly signed messages (needs --signing-key)')
    p.set_defaults(handler=cmd_sim)

    k = sub.add_parser('mavlink-key', help='MAVLink 2 signing keys (docs/MAVLINK.md)')
    ks = k.add_subparsers(dest='key_command', required=True)
    create = ks.add_parser('create', help='write a new random 32-byte key file (mode 0600)')
    create.add_argument('file', help='where to write it (never overwritten)')
    create.set_defaults(handler=cmd_key_create)
    send = ks.add_parser('send', help="put a key on a vehicle: MAVLink SETUP_SIGNING (ArduPilot; "
                                      'PX4 with MAV_SIGN_CFG), over a trusted link (USB)')
    send.add_argument('file', help='the key file')
    send.add_argument('--mavlink', dest='connection', required=True, metavar='CONNECTION',
                      help='pymavlink connection string to the vehicle (/dev/ttyACM0, ...)')
    send.add_argument('--system', type=int, default=1, help='the vehicle system id')
    send.add_argument('--component', type=int, default=1, help='the autopilot component id')
    send.set_defaults(handler=cmd_key_send)


def cmd_sim(args: Any) -> int:
    """Run the simulator until Ctrl-C."""
    from tool_router.sim.autopilot import run_from_args

    if args.require_signed and not args.signing_key:
        print('--require-signed needs --signing-key FILE')
        return 2
    return run_from_args(args)


def cmd_key_create(args: Any) -> int:
    """Write a new signing key file."""
    from tool_router.common.mavlink_signing import create_mavlink_key

    try:
        create_mavlink_key(args.file)
    except FileExistsError:
        print(f'{args.file} exists; a key file is never overwritten')
        return 1
    print(f'wrote {args.file} (32 random bytes, mode 0600); give the executor '
          f'mavlink.signing_key_file:={args.file}')
    return 0


def cmd_key_send(args: Any) -> int:
    """Send SETUP_SIGNING with the key and the current signing timestamp."""
    import os

    os.environ.setdefault('MAVLINK20', '1')
    from pymavlink import mavutil

    from tool_router.common.errors import ConfigError
    from tool_router.common.mavlink_signing import read_mavlink_key, signing_timestamp

    try:
        key = read_mavlink_key(args.file)
    except ConfigError as exc:
        print(f'{exc.what} ({exc.where})')
        return 1
    conn = mavutil.mavlink_connection(args.connection, source_system=255, source_component=190)
    try:
        conn.mav.setup_signing_send(args.system, args.component, list(key), signing_timestamp())
    finally:
        conn.close()
    print(f'sent SETUP_SIGNING to system {args.system} component {args.component}; check that '
          'the vehicle now signs its HEARTBEAT before requiring signatures')
    return 0
