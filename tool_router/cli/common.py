"""What every ``tool-router`` sub-command shares: config options, building a router, JSON out.

A leaf of the command-line layer: the sub-command modules import it, it
imports none of them (and the core imports no command-line module at all).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# How long `call --execute` and `confirm` wait for the executor's outcome (after its ack, or
# the decision), beyond the time tools wait for an operator (each announced confirmation
# adds its own timeout_s): eight tools of call_timeout_s 3 s on the simulator, or a take-off
# and a goto of 60 s each over MAVLink (config/executor_mavlink.yaml), fit with room to
# spare (docs/EXECUTOR.md, "What the operator sees").
DEFAULT_WAIT_S = 300.0


def add_config_args(p: argparse.ArgumentParser) -> None:
    """Add --config and --set to a sub-command."""
    p.add_argument(
        '--config', help='router parameters file (default: the shipped config/router.yaml)'
    )
    p.add_argument(
        '--set',
        action='append',
        default=[],
        metavar='NAME=VALUE',
        help='override a parameter, e.g. --set cdbv3.gap=0.3 (repeatable)',
    )


def add_signing_args(p: argparse.ArgumentParser, what: str) -> None:
    """Add the operator key options (--operator, --key-id, --key, --operators) to a command.

    ``what`` says what the key signs (shown in the help); ``signing_key`` in
    ``tool_router.executor.auth`` resolves them to a key.
    """
    p.add_argument('--operator', default='', help=f'{what}: your operator name; its key in the '
                                                  'operators file signs (default: login name)')
    p.add_argument('--key-id', default='', help=f'{what}: sign with this key id of the '
                                                'operators file')
    p.add_argument('--key', default='', help=f'{what}: sign with this key file instead (key id: '
                                             '--key-id, else its name without .key)')
    p.add_argument('--operators', default='', help='operators file (default: '
                                                   '$ROS_HOME/tool_router/operators.yaml)')


def config_from_args(args: argparse.Namespace, **extra: Any) -> Any:
    """The router configuration of ``--config`` and ``--set`` (``extra`` overrides both)."""
    from tool_router.routing.config import load_router_config, parse_overrides

    overrides = {**parse_overrides(getattr(args, 'set', None) or []), **extra}
    return load_router_config(getattr(args, 'config', None), overrides)


def router_from_args(args: argparse.Namespace, **extra: Any) -> Any:
    """A router built from --config and --set (loads the model and the index)."""
    from tool_router.routing.router import Router

    return Router(config_from_args(args, **extra))


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write('\n')


def in_namespace(args: argparse.Namespace, *names: tuple[str, str]) -> None:
    """Move the ROS names of ``args`` (``(attribute, default)`` pairs) under ``--namespace``.

    Only names left at their default move: a name given in full is used as given.
    """
    ns = (getattr(args, 'namespace', '') or '').strip('/')
    if not ns:
        return
    for attribute, default in names:
        if getattr(args, attribute, None) == default:
            setattr(args, attribute, f'/{ns}{default}')
