"""``tool-router sim --mavlink CONNECTION``: the MAVLink-speaking simulator in the foreground."""
from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``sim`` to the ``tool-router`` parser (pymavlink is imported when it runs)."""
    p = sub.add_parser('sim', help='run the MAVLink-speaking vehicle simulator (docs/MAVLINK.md)')
    p.add_argument('--mavlink', dest='connection', default='udpout:127.0.0.1:14550',
                   metavar='CONNECTION',
                   help='pymavlink connection string (default udpout:127.0.0.1:14550, where '
                        'the executor of config/executor_mavlink.yaml listens)')
    p.add_argument('--battery', type=float, default=100.0, help='initial charge, %%')
    p.add_argument('--drain', type=float, default=0.05,
                   help='battery drain while armed on the ground, %%/s (three times in the air)')
    p.add_argument('--min-arm-battery', type=float, default=20.0,
                   help='arming is DENIED below this charge, %%')
    p.add_argument('--system', type=int, default=1, help='MAVLink system id')
    p.set_defaults(handler=cmd_sim)


def cmd_sim(args: Any) -> int:
    """Run the simulator until Ctrl-C."""
    from tool_router.sim.autopilot import run_from_args

    return run_from_args(args)
