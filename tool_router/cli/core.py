"""Core sub-commands: policies, route (in-process), call (over ROS), serve, dataset."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tool_router.cli.common import (DEFAULT_WAIT_S, add_config_args, add_signing_args,
                                    config_from_args, print_json)


def cmd_route(args: argparse.Namespace) -> int:
    """Route one request in-process and print the tools (or why there are none)."""
    from tool_router.routing.router import Router, check_text

    config = config_from_args(args)
    check_text(args.text, config.max_text_length)  # a bad request fails before the model loads
    router = Router(config)
    result = router.route(args.text, args.policy or '', args.max_tools)
    notes = _condition_notes(config, result)
    if args.json:
        print_json(
            {
                'request_id': result.request_id,
                'tools': result.tools,
                'scores': result.scores,
                'policy': result.policy,
                'latency_ms': round(result.latency_ms, 3),
                'fallback_used': result.fallback_used,
                'fallback_reason': result.fallback_reason,
                'dropped': result.dropped,
                'condition_notes': notes,
                'explanation': result.explanation().model_dump(mode='json'),
            }
        )
    else:
        _print_tools(result.tools, result.scores, result.policy, result.latency_ms,
                     why_nothing(result) if not result.tools else '')
        for note in notes:  # what each conditional tool waits for, or why it is refused
            print(note)
    return 0


def _condition_notes(config: Any, result: Any) -> list[str]:
    """What the executor would make of each condition of ``result`` (as /route_request says)."""
    from tool_router.common.conditions import condition_notes
    from tool_router.common.places import load_places

    conditions = result.decision.conditions if result.decision else {}
    places = load_places(config.places_file or None)
    return condition_notes(list(result.tools), conditions, places, result.text)


def why_nothing(result: Any) -> str:
    """Why a routing result holds no tool, in words (the policy's note, fallback, drops)."""
    reasons: list[str] = []
    decision = result.decision
    if decision is not None and decision.note:
        reasons.append(decision.note)
    if result.fallback_reason and result.fallback_reason not in reasons:
        reasons.append(result.fallback_reason)
    if result.dropped:
        reasons.append(f'dropped names outside the catalog: {", ".join(result.dropped)}')
    if decision is not None and decision.candidates:
        tool, score = decision.candidates[0]
        reasons.append(f'closest tool: {tool} ({score:.2f})')
    return '; '.join(reasons) or 'the policy selected nothing'


def _print_tools(tools: list[str], scores: list[float], policy: str, latency_ms: float,
                 why: str = '') -> None:
    if not tools:
        print(f'(no tool: {why or "nothing selected"}) [{policy}, {latency_ms:.1f} ms]')
    for tool, score in zip(tools, scores):
        print(f'{tool:22s} {score:.3f}')
    if tools:
        print(f'[{policy}, {latency_ms:.1f} ms]')


def cmd_call(args: argparse.Namespace) -> int:
    """Call /route_request on a running node and print the answer (or why it is empty).

    With ``--execute`` (and without ``--no-wait``) it then waits for the executor's final
    record of the request and prints one line per tool: exit status 0 when every tool did
    what was asked, 1 when one failed or was refused, 3 when no outcome came in time.
    """
    from tool_router.ros.client import call_route

    service = f"{namespace_prefix(args.namespace)}/route_request"
    request_id, signature = _requester_signature(args)
    outcomes = None
    if args.execute and not args.no_wait:
        from tool_router.ros.executor_client import OutcomeWatch

        outcomes = OutcomeWatch(args.namespace)  # before sending: nothing it says is missed
    try:
        if outcomes is not None:
            outcomes.matched(min(args.timeout, 5.0))
        resp = call_route(
            args.text,
            policy=args.policy or '',
            max_tools=args.max_tools,
            timeout_s=args.timeout,
            execute=args.execute,
            service=service,
            request_id=request_id,
            signature=signature,
        )
        code = _print_call(args, resp)
        if outcomes is not None and resp.success and resp.executed:
            return _wait_outcome(args, outcomes, resp)
        return code
    finally:
        if outcomes is not None:
            outcomes.close()


def call_json(resp: Any) -> dict[str, Any]:
    """The JSON of a /route_request answer (``tool-router call --json``)."""
    import json

    try:
        explanation = json.loads(resp.explanation_json) if resp.explanation_json else None
    except ValueError:
        explanation = resp.explanation_json
    return {
        'success': resp.success,
        'message': resp.message,
        'request_id': resp.request_id,
        'tools': list(resp.tools),
        'scores': [round(float(c.score), 4) for c in resp.choices],
        'conditions': [c.condition for c in resp.choices],
        'policy': resp.policy,
        'fallback_used': resp.fallback_used,
        'fallback_reason': resp.fallback_reason,
        'latency_ms': round(resp.latency_ms, 3),
        'dropped': list(resp.dropped),
        'executed': resp.executed,
        'explanation': explanation,
    }


def _print_call(args: argparse.Namespace, resp: Any) -> int:
    """Print the router's answer (JSON only at the end when an outcome is awaited)."""
    waiting = args.execute and not args.no_wait and resp.success and resp.executed
    if args.json:
        if not waiting:
            print_json(call_json(resp))
    elif not resp.success:
        if resp.tools:
            _print_tools(list(resp.tools), [c.score for c in resp.choices], resp.policy,
                         resp.latency_ms)
        print(f'tool-router: {resp.message}', file=sys.stderr)
    else:
        if not resp.tools:  # the node's message says why
            _print_tools([], [], resp.policy, resp.latency_ms, resp.message)
            return 0
        _print_tools(list(resp.tools), [c.score for c in resp.choices], resp.policy,
                     resp.latency_ms)
        for note in filter(None, resp.message.split('; ')):  # e.g. what a condition waits for
            print(note)
        if args.execute and resp.executed:
            from tool_router.executor.story import namespace_option, show_hint

            later = f'{show_hint(resp.request_id)}{namespace_option(args.namespace)}'
            if waiting:
                print(f'handed to the executor as request {resp.request_id} (waiting for its '
                      f'outcome: at most {args.wait:g} s, plus any operator confirmation)',
                      flush=True)
            else:
                print(f'handed to the executor as request {resp.request_id} (not waiting: '
                      f'`{later}` tells what it did)')
        elif not args.execute:
            print('route only: nothing was executed (--execute acts on the vehicle)')
    return 0 if resp.success else 1


def _wait_outcome(args: argparse.Namespace, outcomes: Any, resp: Any) -> int:
    """Wait for the executor's final record of ``resp``'s request; print it, tool by tool."""
    from tool_router.executor.story import (namespace_option, outcome_lines, record_ok,
                                            show_hint, waiting_lines, watch_lines)

    rid = resp.request_id
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if args.json else \
        (lambda line: print(line, flush=True))
    asked: list[dict[str, Any]] = []

    def on_confirmation(msg: Any) -> float:
        asked.append({'tool': msg.tool, 'risk': msg.risk, 'timeout_s': msg.timeout_s})
        for line in waiting_lines(rid, msg.tool, msg.risk, msg.timeout_s, args.namespace,
                                  args.operator):
            say(line)
        return float(msg.timeout_s)  # the operator's time is not the executor's

    try:
        record = outcomes.wait(rid, args.wait, on_confirmation=on_confirmation)
    except KeyboardInterrupt:
        say(f'stopped waiting; the executor goes on with request {rid}: '
            f'`{show_hint(rid)}{namespace_option(args.namespace)}` tells what it did')
        return 130
    if record is None:
        print(f'tool-router: no outcome of request {rid} within {args.wait:g} s (plus the '
              f'confirmation waits); it may still be running: '
              f'`{show_hint(rid)}{namespace_option(args.namespace)}`', file=sys.stderr)
        if args.json:
            print_json({**call_json(resp), 'outcome': None})
        return 3
    armed = tuple(t.watch_id for t in record.tools if t.outcome == 'armed' and t.watch_id)
    watches = [w for w in outcomes.watches_of(rid, 2.0 if armed else 0.0, armed)
               if w.event == 'armed' and w.watch_id in armed]
    if args.json:
        print_json({**call_json(resp), 'confirmations_asked': asked,
                    'outcome': record.model_dump(mode='json'),
                    'watches': [w.model_dump(mode='json') for w in watches],
                    'ok': record_ok(record)})
    else:
        for line in outcome_lines(record, watches):
            print(line)
        for watch in watches:
            for line in watch_lines(watch, args.namespace):
                print(line)
    return 0 if record_ok(record) else 1


def _requester_signature(args: argparse.Namespace) -> tuple[str, Any]:
    """For --execute: a request id of our own and its requester signature (docs/SECURITY.md).

    Route-only calls stay unsigned; ``--unsigned`` sends an execute call unsigned (only an
    executor with ``require_signed_execute: false`` dispatches it).
    """
    if not args.execute or args.unsigned:
        return '', None
    import getpass
    import uuid
    from pathlib import Path

    from tool_router.common import signing
    from tool_router.executor import auth

    path = Path(args.operators) if args.operators else auth.default_operators_file()
    operator = args.operator or getpass.getuser()
    key, key_id = auth.signing_key(path, operator, args.key_id, args.key)
    request_id = uuid.uuid4().hex[:16]
    return request_id, signing.sign_request(key, key_id, request_id, args.text,
                                            policy=args.policy or '',
                                            max_tools=max(0, args.max_tools))


def namespace_prefix(namespace: str) -> str:
    """'uav1', '/uav1' or '/uav1/' -> '/uav1'; '' or '/' -> ''."""
    return '/' + namespace.strip('/') if namespace.strip('/') else ''


def ros_param(text: str) -> str:
    """An argparse type: one ROS parameter assignment ``NAME:=VALUE``."""
    name, sep, _ = text.partition(':=')
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(
            f'expected NAME:=VALUE (e.g. catalog:=/path/x.yaml), got {text!r}; '
            'a parameters file goes to --config / --executor-config'
        )
    return text


def node_command(
    name: str,
    params_file: str | None = None,
    params: list[str] | None = None,
    namespace: str = '',
) -> list[str]:
    """Command line that runs one of the package's nodes with this interpreter.

    ``params_file`` is passed as ``--params-file``; every ``NAME:=VALUE`` in
    ``params`` as ``-p``, whatever its value looks like (a value may well be a
    path ending in .yaml). A ``namespace`` (e.g. uav1) moves every name the node uses.
    """
    cmd = [sys.executable, '-m', f'tool_router.ros.{name}', '--ros-args']
    if namespace_prefix(namespace):
        cmd += ['-r', f'__ns:={namespace_prefix(namespace)}']
    if params_file:
        cmd += ['--params-file', params_file]
    for p in params or []:
        cmd += ['-p', p]
    return cmd


def serve_nodes(args: argparse.Namespace) -> list[str]:
    """The names of the nodes `serve` starts (router, executor, simulator)."""
    names = ['router_node']
    if not getattr(args, 'no_executor', False):
        names.append('executor_node')
    if getattr(args, 'sim', False):
        names.append('sim_vehicle')
    return names


def serve_processes(args: argparse.Namespace,
                    params_dir: Path | None = None) -> list[tuple[str, list[str]]]:
    """(name, argv) of the nodes `serve` starts: router, executor, and with --sim the simulator.

    With ``params_dir`` every file is checked first (ConfigError: one line) and, under
    --namespace, the parameters files are rewritten there with the node keys in the namespace
    (tool_router/common/params_files.py); without it the argv is built as given.
    """
    from tool_router.common.params_files import (assignments, check_file_params,
                                                 prepare_params_file)

    ns = getattr(args, 'namespace', '') or ''
    started = serve_nodes(args)

    def params_file(path: str | None, node: str) -> str | None:
        if not path or params_dir is None:
            return path
        return prepare_params_file(path, node, ns, started, params_dir)

    if params_dir is not None:
        check_file_params(assignments(args.param), '--param')
        check_file_params(assignments(getattr(args, 'executor_param', [])), '--executor-param')
    procs = [('router_node', node_command('router_node', params_file(args.config, 'router_node'),
                                          args.param, ns))]
    if 'executor_node' in started:
        exec_params = [f'mode:={args.mode}'] if getattr(args, 'mode', None) else []
        exec_params += getattr(args, 'executor_param', [])
        procs.append((
            'executor_node',
            node_command('executor_node',
                         params_file(getattr(args, 'executor_config', None), 'executor_node'),
                         exec_params, ns),
        ))
    if 'sim_vehicle' in started:
        procs.append(('sim_vehicle', node_command('sim_vehicle', None,
                                                  getattr(args, 'sim_param', []), ns)))
    return procs


def check_params_file(path: str, option: str) -> None:
    """Refuse, in one line (ConfigError), a parameters file rcl could not open or read.

    Checked before any node starts: rcl would refuse it inside ``rclpy.init`` of the node, a
    traceback in the middle of the other nodes' start-up. The same rules as rcl's parser:
    YAML, a mapping, every value under a ``ros__parameters`` key of a node (or namespace).
    """
    from tool_router.common.errors import ConfigError
    from tool_router.common.yaml_util import load_yaml_with_lines

    where = f'{option} {path}'
    if not Path(path).exists():
        raise ConfigError('no such parameters file', where=where)
    if Path(path).is_dir():
        raise ConfigError('is a directory, not a parameters file', where=where)
    try:
        data, _ = load_yaml_with_lines(Path(path), ConfigError)
    except ConfigError as exc:
        raise ConfigError(exc.what, where=f'{option} {exc.where}') from None

    def walk(section: Any, trail: list[str]) -> None:
        if not isinstance(section, dict):
            if not trail:
                raise ConfigError('expected NODE_NAME: {ros__parameters: {...}} at the top '
                                  'level', where=where)
            raise ConfigError(f'{".".join(trail)}: a value outside ros__parameters (rcl '
                              'reads only NODE_NAME: {ros__parameters: {NAME: VALUE}})',
                              where=where)
        for key, value in section.items():
            if key == 'ros__parameters':
                if not isinstance(value, dict):
                    raise ConfigError(f'{".".join(trail + [key])}: expected a mapping',
                                      where=where)
                continue
            walk(value, trail + [str(key)])

    walk(data, [])


def cmd_serve(args: argparse.Namespace) -> int:
    """Start the nodes as child processes; Ctrl-C (or one child exiting) stops them all.

    Every file is checked before anything starts (a ConfigError is one line, exit 2).
    """
    import tempfile

    for option, path in (('--config', getattr(args, 'config', None)),
                         ('--executor-config', getattr(args, 'executor_config', None))):
        if path:
            check_params_file(path, option)
    with tempfile.TemporaryDirectory(prefix='tool_router_serve_') as params_dir:
        return _serve(serve_processes(args, Path(params_dir)))


def _serve(commands: list[tuple[str, list[str]]]) -> int:
    procs: list[tuple[str, subprocess.Popen]] = []
    stop = {'flag': False}

    def _stop(*_: Any) -> None:
        stop['flag'] = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    code = 0
    try:
        for name, argv in commands:
            print(f'starting {name}: {" ".join(argv)}', flush=True)
            # own process group: the terminal's Ctrl-C reaches only us, we stop the children
            procs.append((name, subprocess.Popen(argv, start_new_session=True)))
        while not stop['flag']:
            for name, proc in procs:
                if proc.poll() is not None:
                    print(f'{name} exited with code {proc.returncode}', file=sys.stderr)
                    stop['flag'], code = True, proc.returncode or 1
            time.sleep(0.2)
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 10.0
        for name, proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f'{name} did not stop within 10 s: killed', file=sys.stderr)
                proc.kill()
                proc.wait()
    return code


def cmd_dataset(args: argparse.Namespace) -> int:
    """Check, split or augment annotated JSONL datasets."""
    from tool_router.common.catalog import load_catalog
    from tool_router.routing.config import load_router_config
    from tool_router.common.errors import DatasetError
    from tool_router.evaluation.dataset import (
        coverage,
        load_jsonl,
        split,
        stratified_split,
        unsorted_tool_lists,
        write_jsonl,
        writer_sides,
    )

    catalog = load_catalog(load_router_config(args.config).resolved_catalog())
    if args.action == 'check':
        for path in args.files:
            examples = load_jsonl(path, catalog)
            unsorted = unsorted_tool_lists(path, fix=args.fix)
            if unsorted:
                shown = ', '.join(map(str, unsorted[:10])) + (' ...' if len(unsorted) > 10 else '')
                print(f'{path}: {len(unsorted)} tool list(s) not in sorted order (lines {shown}): '
                      + ('rewritten sorted' if args.fix else 'read as sets; --fix sorts them'))
            cov = coverage(examples)
            low = sorted((n, t) for t, n in cov['per_tool'].items())[:3]
            missing = [t for t in catalog.names if t not in cov['per_tool']]
            print(
                f'{path}: OK, {cov["n"]} requests, levels {cov["levels"]}, '
                f'least covered {low}, tools never used: {missing or "none"}'
            )
        return 0
    if args.action == 'augment':
        return _augment(args, catalog)
    keys = tuple(k for k in args.stratify.split(',') if k)
    if keys == ('level',) and len(args.files) == 1 and not (
            args.keep_test or args.keep_dev or args.test_writers or args.dev_writers):
        # The original split (benchmarks/data/dev.jsonl, test.jsonl) reproduces with this.
        dev, test = split(load_jsonl(args.files[0], catalog), args.test_fraction, args.seed)
        every = dev + test
    else:
        keep_test = _ids(args.keep_test)
        keep_dev = _ids(args.keep_dev)
        test_writers = {w for w in args.test_writers.split(',') if w}
        dev_writers = {w for w in args.dev_writers.split(',') if w}
        if test_writers & dev_writers:
            raise DatasetError('a writer cannot be on both sides: '
                               + ', '.join(sorted(test_writers & dev_writers)))
        dev, test, every = [], [], []
        for path in args.files:  # each file on its own: a new batch never moves an old line
            examples = load_jsonl(path, catalog)
            by_writer = writer_sides(examples, test_writers, dev_writers, keep_test, keep_dev)
            try:
                d, t = stratified_split(
                    examples, args.test_fraction, args.seed, keys, keep_test | by_writer[1],
                    keep_dev | by_writer[0]
                )
            except ValueError as exc:
                raise DatasetError(str(exc), where=path) from None
            dev += d
            test += t
            every += examples
        _unique(every)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(dev, out / 'dev.jsonl')
    write_jsonl(test, out / 'test.jsonl')
    if len(args.files) > 1:
        write_jsonl(every, out / 'requests.jsonl')
    print(f'dev: {len(dev)}, test: {len(test)} -> {out}')
    return 0


def _augment(args: argparse.Namespace, catalog: Any) -> int:
    """Noisy training variants of a development split; refuses test-split requests."""
    from tool_router.common.errors import DatasetError
    from tool_router.evaluation.augment import augment
    from tool_router.evaluation.dataset import load_jsonl, write_jsonl
    from tool_router.evaluation.fitting.guard import refuse_reporting_data

    examples = [ex for path in args.files for ex in load_jsonl(path, catalog)]
    refuse_reporting_data(examples, args.files[0])
    kinds = [k for k in args.noise.split(',') if k] or None
    try:
        variants = augment(examples, args.per_example, args.seed, kinds)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
    out = Path(args.out)
    if out.suffix != '.jsonl':
        out.mkdir(parents=True, exist_ok=True)
        out = out / 'augmented.jsonl'
    write_jsonl(variants, out)
    print(f'{len(variants)} variants of {len(examples)} requests -> {out}')
    return 0


def _ids(paths: list[str]) -> frozenset[str]:
    """Ids of the requests in earlier split files (missing files count as empty)."""
    import json

    ids: set[str] = set()
    for path in paths:
        if not Path(path).exists():
            continue
        for line in Path(path).read_text(encoding='utf-8').splitlines():
            if line.strip():
                ids.add(json.loads(line)['id'])
    return frozenset(ids)


def _unique(examples: list[Any]) -> None:
    from tool_router.common.errors import DatasetError

    ids: set[str] = set()
    texts: set[str] = set()
    for ex in examples:
        key = ' '.join(ex.request.lower().split())
        if ex.id in ids or key in texts:
            raise DatasetError(f'request {ex.id!r} repeats an id or a text of another file')
        ids.add(ex.id)
        texts.add(key)


def cmd_policies(args: argparse.Namespace) -> int:
    """The policy registry: name, local or remote, config section, summary."""
    from tool_router.routing.policies.registry import REGISTRY

    rows = REGISTRY.table()
    if args.json:
        print_json([dict(zip(('name', 'where', 'section', 'summary'), r)) for r in rows])
        return 0
    for name, where, section, summary in rows:
        print(f'{name:20s} {where:7s} {section:8s} {summary}')
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``policies``, ``route``, ``call``, ``serve`` and ``dataset`` to the parser."""
    p = sub.add_parser('policies', help='list the routing policies (the policy registry)')
    p.add_argument('--json', action='store_true', help='print the registry as JSON')
    p.set_defaults(handler=cmd_policies)

    p = sub.add_parser('route', help='route one request in-process (no ROS)')
    p.add_argument('text', help='the request, e.g. "land when the battery is low"')
    p.add_argument('--policy', default='', help='policy name (default: configured)')
    p.add_argument('--max-tools', type=int, default=0,
                   help='at most N tools (default 0: the configured max_tools)')
    p.add_argument('--json', action='store_true', help='print the full result as JSON')
    add_config_args(p)
    p.set_defaults(handler=cmd_route)

    p = sub.add_parser('call', help='call /route_request on a running router node')
    p.add_argument('text', help='the request, e.g. "land when the battery is low"')
    p.add_argument('--policy', default='', help="policy name (default: the node's)")
    p.add_argument('--max-tools', type=int, default=0,
                   help="at most N tools (default 0: the node's max_tools)")
    p.add_argument('--timeout', type=float, default=30.0, help='seconds to wait for the service')
    p.add_argument('--json', action='store_true', help='print the full response as JSON')
    act = p.add_mutually_exclusive_group()
    act.add_argument('--dry', dest='execute', action='store_false', default=False,
                     help='route only: say which tools would be picked (default)')
    act.add_argument('--execute', dest='execute', action='store_true',
                     help='also hand the selection to the executor (acts on the vehicle); '
                          "signed with the operator's key (--operator, --key-id or --key)")
    p.add_argument('--no-wait', action='store_true',
                   help='--execute: return at the executor\'s ack, without waiting for what '
                        'the vehicle did (`tool-router trace show ID` tells it later)')
    p.add_argument('--wait', type=float, default=DEFAULT_WAIT_S, metavar='S',
                   help='--execute: wait at most S seconds for the outcome, plus each '
                        f'confirmation\'s own timeout (default {DEFAULT_WAIT_S:g})')
    p.add_argument('--namespace', default='', help='vehicle namespace, e.g. uav1')
    add_signing_args(p, 'execute')
    p.add_argument('--unsigned', action='store_true',
                   help='execute unsigned (only an executor with require_signed_execute: false '
                        'dispatches it)')
    p.set_defaults(handler=cmd_call)

    p = sub.add_parser('serve', help='start the router node (and the executor / simulator)')
    p.add_argument('--config', help='router parameters file')
    p.add_argument(
        '--param',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        type=ros_param,
        help='extra router parameter, ROS syntax (repeatable)',
    )
    p.add_argument('--sim', action='store_true', help='also start the simulated vehicle')
    p.add_argument(
        '--sim-param',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        type=ros_param,
        help='simulator parameter, e.g. battery_pct:=30 battery_drain_pct_per_s:=0.5 (repeatable)',
    )
    p.add_argument(
        '--mode',
        choices=['execute', 'dry_run', 'shadow'],
        help='executor mode (default: from the executor config)',
    )
    p.add_argument('--executor-config', help='executor parameters file')
    p.add_argument(
        '--executor-param',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        type=ros_param,
        help='extra executor parameter, ROS syntax (repeatable)',
    )
    p.add_argument('--no-executor', action='store_true', help='start the router only')
    p.add_argument('--namespace', default='',
                   help='start every node in this namespace (e.g. uav1: /uav1/route_request, '
                        '/uav1/executor/..., /uav1/sim/...)')
    p.set_defaults(handler=cmd_serve)

    p = sub.add_parser(
        'dataset', help='check, split or augment (training only) an annotated JSONL dataset'
    )
    p.add_argument('action', choices=['check', 'split', 'augment'],
                   help='check: validate and summarise; split: dev/test split; '
                        'augment: noisy training variants')
    p.add_argument('files', nargs='+', help='annotated JSONL files')
    p.add_argument(
        '--out',
        default='.',
        help='split: output directory for dev.jsonl / test.jsonl; '
        'augment: a .jsonl file or a directory (augmented.jsonl)',
    )
    p.add_argument(
        '--per-example', type=int, default=2, help='augment: noisy variants per request'
    )
    p.add_argument(
        '--noise',
        default='',
        help='augment: comma-separated noise kinds (default: all of '
        'typo,elongate,shout,lowercase,filler,shorthand,preamble,numbered,repeat)',
    )
    p.add_argument('--test-fraction', type=float, default=0.4,
                   help='split: share of each stratum held out for test (default 0.4)')
    p.add_argument('--seed', type=int, default=20261130, help='split/augment: random seed')
    p.add_argument(
        '--stratify',
        default='level',
        help='split: comma-separated fields to stratify by (e.g. level,style)',
    )
    p.add_argument(
        '--keep-test',
        action='append',
        default=[],
        metavar='JSONL',
        help='split: requests whose id is in this file stay in test (repeatable)',
    )
    p.add_argument(
        '--keep-dev',
        action='append',
        default=[],
        metavar='JSONL',
        help='split: requests whose id is in this file stay in dev (repeatable)',
    )
    p.add_argument('--test-writers', default='', metavar='W1,W2',
                   help='split: every request of these writers goes to test (a writer is '
                        'never on both sides; kept ids still win)')
    p.add_argument('--dev-writers', default='', metavar='W1,W2',
                   help='split: every request of these writers goes to dev')
    p.add_argument('--fix', action='store_true',
                   help='check: rewrite unsorted tool lists in sorted order (other lines '
                        'unchanged)')
    p.add_argument('--config', help='router parameters file (for the catalog)')
    p.set_defaults(handler=cmd_dataset)
