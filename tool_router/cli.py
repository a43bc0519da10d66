"""The ``tool-router`` command line.

Sub-commands live with the code they drive; each module exposes
``register(subparsers)``. Heavy imports happen inside the handlers, so
``tool-router --help`` is instant.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

# Modules that add sub-commands (each has register(subparsers)).
COMMAND_MODULES = (
    'tool_router.cli_core',
    'tool_router.fit',
    'tool_router.evaluation.cli',
    'tool_router.executor.cli',
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='tool-router',
        description='Route natural-language UAV requests to an allowlisted tool catalog.',
    )
    sub = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if not exc.name or not name.startswith(exc.name):
                raise
            continue
        module.register(sub)
    return parser


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write('\n')


def main(argv: list[str] | None = None) -> int:
    from tool_router.errors import ToolRouterError

    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except ToolRouterError as exc:
        print(f'tool-router: error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == '__main__':
    raise SystemExit(main())
