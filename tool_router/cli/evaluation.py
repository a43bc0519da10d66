"""Evaluation sub-commands: ``eval`` and ``bag`` (record, record-selections)."""
from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from tool_router.cli.common import in_namespace


def _catalog(args: argparse.Namespace) -> Any:
    from tool_router.common.catalog import load_catalog
    from tool_router.cli.common import config_from_args
    config = config_from_args(args)
    return config, load_catalog(config.resolved_catalog())


def _policy_names(args: argparse.Namespace, default_policy: str) -> list[tuple[str, bool]]:
    from tool_router.evaluation.runner import resolve_policies
    from tool_router.routing.policies.registry import REGISTRY
    return resolve_policies(args.policies.split(','), default_policy, REGISTRY.names())


def cmd_eval(args: argparse.Namespace) -> int:
    """Route (or read) every request, score, and write the report directory."""
    in_namespace(args, ('service', '/route_request'),
                 ('selection_topic', '/tool_router/decisions'))
    from tool_router.evaluation.report import RunInfo, build_report, write_report
    from tool_router.evaluation.runner import load_dataset, run, score_recorded, session_warnings
    if args.repeats < 1:
        raise SystemExit('tool-router: error: --repeats must be >= 1')
    config, catalog = _catalog(args)
    dataset = load_dataset(args.dataset, catalog, replay=args.reroute)
    command = 'tool-router ' + ' '.join(shlex.quote(a) for a in sys.argv[1:]) \
        if sys.argv[0].endswith(('tool-router', 'cli.py')) else ''
    warnings: list[str] = []
    if dataset.recorded is not None:
        records, mode, defaults = score_recorded(dataset.recorded), 'recorded', []
        warnings = session_warnings(dataset.recorded)
        for line in warnings:
            print(f'tool-router: warning: {line}', file=sys.stderr)
    else:
        policies = _policy_names(args, config.policy)  # unknown names fail before any routing
        examples = dataset.examples[:args.limit] if args.limit else dataset.examples
        dataset.examples = examples
        names = [n for n, _ in policies]
        defaults = [n for n, d in policies if d]
        if args.live:
            records, mode = _run_live(args, examples, names), 'live'
        else:
            from tool_router.cli.common import router_from_args
            from tool_router.evaluation.runner import InProcessBackend
            backend = InProcessBackend(router_from_args(args))
            for name in names:
                backend.router.policy(name)
            warnings = _memory_warnings(examples, names, backend.router.config.lcr.model_path)
            for line in warnings:
                print(f'tool-router: warning: {line}', file=sys.stderr)
            records, mode = run(examples, names, backend, args.repeats), 'in_process'
    run_info = RunInfo(mode=mode, repeats=args.repeats if mode != 'recorded' else 1,
                       seed=args.seed, bootstrap_resamples=args.resamples, command=command,
                       warnings=warnings)
    report = build_report(records, dataset.summary(), run_info, defaults)
    out = write_report(report, records, args.out, plots=not args.no_plots)
    for name, p in report.policies.items():
        oos = p.out_of_scope.empty_rate
        print(f'{name:12s} macro composite {p.macro.composite:.3f}  out-of-scope empty rate '
              f'{"-" if oos is None else f"{oos:.3f}"}')
    print(f'report: {out / "report.md"}')
    return 0


def _memory_warnings(examples: list[Any], names: list[str], model_path: str) -> list[str]:
    """A warning when lcr's exemplar memory holds requests of the dataset (in-sample figures)."""
    if not any(n.startswith('lcr') or n == 'hybrid' for n in names):
        return []
    from tool_router.routing.exemplars import in_memory_warning
    line = in_memory_warning([ex.id for ex in examples], model_path)
    return [line] if line else []


def _run_live(args: argparse.Namespace, examples: list[Any], names: list[str]) -> list[Any]:
    from tool_router.evaluation.runner import run
    from tool_router.ros.live_eval import LiveBackend
    from tool_router.ros.client import RouteClient
    with RouteClient(args.service, wait_s=args.timeout) as client:
        backend = LiveBackend(client, record=bool(args.record_out),
                              selection_topic=args.selection_topic, timeout_s=args.timeout)
        records = run(examples, names, backend, args.repeats)
        if args.record_out:
            bag = backend.write(args.record_out, args.storage)
            print(f'recorded session: {bag}')
    return records


def cmd_bag_record(args: argparse.Namespace) -> int:
    """Write an annotated JSONL dataset as a bag of Request messages."""
    from tool_router.evaluation.bag import write_requests_bag
    from tool_router.evaluation.dataset import load_jsonl
    _, catalog = _catalog(args)
    examples = load_jsonl(args.dataset, catalog)
    out = write_requests_bag(examples, args.out, args.storage, args.rate, args.topic)
    print(f'{len(examples)} requests -> {out} ({args.storage}, {args.rate:g} Hz on {args.topic})')
    return 0


def cmd_bag_record_selections(args: argparse.Namespace) -> int:
    """Record the router's selections (and the requests) from the live graph."""
    from tool_router.ros.live_eval import record_selections
    in_namespace(args, ('selection_topic', '/tool_router/decisions'),
                 ('request_topic', '/tool_router/requests'))
    n = record_selections(args.out, args.duration, args.storage, args.selection_topic,
                          args.request_topic)
    print(f'{n} messages -> {args.out}')
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``eval`` and ``bag`` to the ``tool-router`` command line."""
    from tool_router.cli.common import add_config_args

    p = sub.add_parser('eval', help='score routing policies on annotated requests (JSONL or bag)')
    p.add_argument('--dataset', action='append', required=True, metavar='PATH',
                   help='annotated JSONL file or rosbag2 directory (repeatable)')
    p.add_argument('--policies', default='default',
                   help="comma-separated policy names; 'default' = the configured one")
    p.add_argument('--out', required=True, help='output directory for the report')
    p.add_argument('--repeats', type=int, default=1, help='route each request N times per policy')
    p.add_argument('--seed', type=int, default=0, help='bootstrap seed')
    p.add_argument('--resamples', type=int, default=2000, help='bootstrap resamples')
    p.add_argument('--limit', type=int, default=0, help='only the first N requests')
    p.add_argument('--no-plots', action='store_true', help='skip the PNG plots')
    p.add_argument('--reroute', action='store_true',
                   help='route the requests of a recorded session bag again instead of scoring '
                        'its recorded selections')
    live = p.add_argument_group('live evaluation (a running router node)')
    live.add_argument('--live', action='store_true', help='route through /route_request')
    live.add_argument('--service', default='/route_request', help='route service name')
    live.add_argument('--timeout', type=float, default=30.0, help='seconds per call / to connect')
    live.add_argument('--namespace', default='', help='vehicle namespace, e.g. uav1 (moves '
                                                      '--service and --selection-topic)')
    live.add_argument('--record-out', metavar='BAGDIR',
                      help='with --live: record the requests and the node selections to a bag')
    live.add_argument('--selection-topic', default='/tool_router/decisions',
                      help='with --record-out: topic of the node\'s selections')
    live.add_argument('--storage', choices=['mcap', 'sqlite3'], default='mcap',
                      help='with --record-out: rosbag2 storage format')
    add_config_args(p)
    p.set_defaults(handler=cmd_eval)

    bag = sub.add_parser('bag', help='write or record rosbag2 files of requests and selections')
    bsub = bag.add_subparsers(dest='bag_command', required=True, metavar='ACTION')
    r = bsub.add_parser('record', help='write an annotated JSONL dataset as a Request bag')
    r.add_argument('--dataset', required=True, help='annotated JSONL file')
    r.add_argument('--out', required=True, help='new bag directory')
    r.add_argument('--storage', choices=['mcap', 'sqlite3'], default='mcap',
                   help='rosbag2 storage format')
    r.add_argument('--rate', type=float, default=2.0, help='requests per second on replay')
    r.add_argument('--topic', default='/tool_router/requests',
                   help='topic of the Request messages')
    r.add_argument('--config', help='router parameters file (for the catalog)')
    r.set_defaults(handler=cmd_bag_record, set=[])

    s = bsub.add_parser('record-selections',
                        help='record /tool_router/decisions (and the requests) from the ROS graph')
    s.add_argument('--out', required=True, help='new bag directory')
    s.add_argument('--duration', type=float, required=True, help='seconds to record')
    s.add_argument('--storage', choices=['mcap', 'sqlite3'], default='mcap',
                   help='rosbag2 storage format')
    s.add_argument('--selection-topic', default='/tool_router/decisions',
                   help='topic of the router\'s SelectedCapabilities')
    s.add_argument('--request-topic', default='/tool_router/requests',
                   help='request topic recorded alongside (its annotations score the session)')
    s.add_argument('--namespace', default='', help='vehicle namespace, e.g. uav1 (moves both '
                                                   'topics)')
    s.set_defaults(handler=cmd_bag_record_selections)
