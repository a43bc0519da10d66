"""``tool-router config``: change a running router's configuration, signed (role ``admin``).

``config set NAME=VALUE ...`` signs the change with the operator's key
(:func:`tool_router.common.signing.config_payload`) and calls the router's ``~/set_config``;
``config show`` asks what was changed since the router started. What may change and how it is
recorded: :mod:`tool_router.routing.signed_config`, docs/SECURITY.md.
"""
from __future__ import annotations

import argparse
import getpass
import json
import sys

from tool_router.cli.common import add_signing_args

ROUTER_HINT = 'is the router running, in this namespace (--namespace) and ROS domain?'


def node_name(args: argparse.Namespace) -> str:
    """The router's fully qualified name (``/uav1/router_node``)."""
    ns = args.namespace.strip('/')
    return f'/{ns}/{args.node}' if ns else f'/{args.node}'


def cmd_config(args: argparse.Namespace) -> int:
    """Set (signed) or show the run-time configuration changes of a router node."""
    from tool_router.ros.executor_client import call_service
    from tool_router.srv import SetConfig

    node = node_name(args)
    service = f'{node}/set_config'
    if args.action == 'show':
        resp = call_service(SetConfig, service, SetConfig.Request(), args.timeout,
                            what='the question did not arrive', hint=ROUTER_HINT)
        if args.json:
            print(json.dumps({'node': node, 'changed': list(resp.changed)}))
        else:
            print('\n'.join([resp.message, *resp.changed]))
        return 0
    if not args.assignments:
        print('tool-router: config set needs NAME=VALUE (e.g. lcr.threshold=0.4)',
              file=sys.stderr)
        return 2
    from rclpy.parameter import Parameter

    from tool_router.cli.executor import _key
    from tool_router.common import signing
    from tool_router.routing.config import parse_overrides

    changes = parse_overrides(args.assignments)
    for name, value in changes.items():
        if value is None or isinstance(value, dict):
            print(f'tool-router: {name}: give a number, text, true/false or a list, not '
                  f'{value!r}', file=sys.stderr)
            return 2
    operator_name = args.operator or getpass.getuser()
    key, key_id = _key(args, operator_name)
    try:
        parameters = [Parameter(name, value=value).to_parameter_msg()
                      for name, value in changes.items()]
    except (TypeError, ValueError) as exc:  # a list of mixed types has no parameter type
        print(f'tool-router: config set: {exc}', file=sys.stderr)
        return 2

    def make() -> SetConfig.Request:  # signed afresh for each attempt: a resent nonce is a replay
        signed = signing.sign_config(key, key_id, node, changes)
        return SetConfig.Request(parameters=parameters, operator_name=operator_name,
                                 key_id=key_id, timestamp=signed.timestamp, nonce=signed.nonce,
                                 signature=signed.signature)

    resp = call_service(SetConfig, service, make(), args.timeout, probe=SetConfig.Request(),
                        resend=make, what='the change was not delivered', hint=ROUTER_HINT)
    if args.json:
        print(json.dumps({'node': node, 'success': resp.success, 'message': resp.message,
                          'changed': list(resp.changed)}))
    else:
        out = sys.stdout if resp.success else sys.stderr
        print('\n'.join([resp.message, *resp.changed]), file=out)
    return 0 if resp.success else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``config`` to the ``tool-router`` parser."""
    p = sub.add_parser('config', help="change a running router's configuration (signed, role "
                                      'admin) or show what was changed')
    p.add_argument('action', choices=['set', 'show'],
                   help='set: NAME=VALUE ... (policy sections, policy, max_tools, ...: '
                        'docs/SECURITY.md); show: the changes since the router started')
    p.add_argument('assignments', nargs='*', metavar='NAME=VALUE',
                   help='set: dotted parameter names, YAML values (lcr.threshold=0.4)')
    p.add_argument('--namespace', default='', help='vehicle namespace, e.g. uav1')
    p.add_argument('--node', default='router_node', help='router node name')
    add_signing_args(p, 'set')
    p.add_argument('--timeout', type=float, default=10.0, help='seconds to wait for the service')
    p.add_argument('--json', action='store_true', help='machine-readable output')
    p.set_defaults(handler=cmd_config)
