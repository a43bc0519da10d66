"""The ``tool-router`` command line.

Sub-commands live with the code they drive; each module exposes
``register(subparsers)``. Heavy imports happen inside the handlers, so
``tool-router --help`` is instant.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# Modules that add sub-commands (each has register(subparsers)).
COMMAND_MODULES = (
    'tool_router.cli.core',
    'tool_router.cli.fitting',
    'tool_router.cli.evaluation',
    'tool_router.cli.executor',
    'tool_router.cli.config',
    'tool_router.cli.mavlink',
    'tool_router.cli.completion',
)


def build_parser() -> argparse.ArgumentParser:
    """The ``tool-router`` parser with every module's sub-commands."""
    from tool_router import __version__

    parser = argparse.ArgumentParser(
        prog='tool-router',
        description='Route natural-language UAV requests to an allowlisted tool catalog.',
    )
    parser.add_argument('--version', action='version', version=f'%(prog)s {__version__}',
                        help='print the version and exit')
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


def main(argv: list[str] | None = None) -> int:
    """Run one ``tool-router`` command; returns the exit code."""
    from tool_router.common.errors import ToolRouterError

    try:
        args = build_parser().parse_args(argv)
        return int(args.handler(args) or 0)
    except ToolRouterError as exc:
        print(f'tool-router: error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader left (`tool-router ... | head`): stop quietly, like any Unix filter.
        # stdout is pointed at /dev/null so that the interpreter's final flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a filter stopped by the pipe


if __name__ == '__main__':
    raise SystemExit(main())
