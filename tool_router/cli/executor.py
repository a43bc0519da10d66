"""Executor sub-commands: ``trace summary|tail|validate`` and ``confirm``."""
from __future__ import annotations

import argparse
import getpass
import json
import sys

from tool_router.cli.common import add_signing_args


def cmd_trace(args: argparse.Namespace) -> int:
    """Summarise, validate or follow execution traces (per namespace: never merged)."""
    if args.action == 'tail':
        return _tail(args)
    if args.action == 'verify':
        return _verify(args)
    if args.action == 'show':
        return _show(args)
    from tool_router.cli.common import print_json
    from tool_router.common.params_files import namespace_of
    from tool_router.executor.config import default_trace_dir
    from tool_router.executor.traces import (by_namespace, format_summary, read_traces,
                                             record_namespace, summarize, trace_files)

    # directories are read with their subdirectories: traces/uav1, traces/uav2, ...
    paths = trace_files(args.files or [default_trace_dir()], recursive=True)
    if not paths:
        print('tool-router: no trace files found', file=sys.stderr)
        return 1
    bad: list[str] = []
    records = [rec for path in paths for rec in read_traces(path, bad)]
    if args.action == 'validate':
        for line in bad:
            print(f'bad line: {line}', file=sys.stderr)
        print(f'{len(records)} valid records in {len(paths)} file(s), {len(bad)} bad line(s)')
        return 1 if bad else 0
    if args.namespace:
        wanted = namespace_of(args.namespace)
        groups = {wanted: [r for r in records if record_namespace(r) == wanted]}
        if records and not groups[wanted]:
            present = ', '.join(ns or "'' (not recorded)" for ns in by_namespace(records))
            print(f'tool-router: no records of namespace {wanted} in {len(paths)} file(s) '
                  f'(namespaces there: {present})', file=sys.stderr)
            return 1
    else:
        groups = by_namespace(records) or {'': []}
    summaries = {}
    for ns, group in groups.items():
        summaries[ns] = summarize(group)
        summaries[ns]['namespace'] = ns
        summaries[ns]['bad_lines'] = bad
    if bad:
        print(f'tool-router: skipped {len(bad)} bad line(s); `tool-router trace validate` '
              'lists them', file=sys.stderr)
    if args.json:  # one namespace: its summary; several: {"namespaces": {ns: summary}}
        print_json(next(iter(summaries.values())) if len(summaries) == 1 else
                   {'namespaces': summaries})
        return 0
    texts = [f"namespace: {ns or '(not recorded: schema before 2.2)'}\n{format_summary(summary)}"
             for ns, summary in summaries.items()]
    print('\n\n'.join(texts))
    return 0


def _verify_dirs(args: argparse.Namespace) -> list[object]:
    """The directories to verify: given, or the default one and each namespace's below it.

    With --namespace, each directory's subdirectory of that namespace (traces/uav1).
    """
    from pathlib import Path

    from tool_router.executor.config import default_trace_dir

    ns = args.namespace.strip().strip('/')
    if args.files:
        return [Path(p) / ns if ns else Path(p) for p in args.files]
    if ns:
        return [default_trace_dir(ns)]
    base = default_trace_dir()
    found = [d for d in [base, *sorted(base.rglob('*'))] if d.is_dir()
             and (any(d.glob('*.jsonl')) or any(d.glob('*.chain.json')))]
    return list(found or [base])


def _verify(args: argparse.Namespace) -> int:
    """Check the hash chain of trace directories; report the first broken link."""
    from pathlib import Path

    from tool_router.common.signing import read_key
    from tool_router.executor.chain import default_chain_key_file, verify_directory

    from tool_router.common.errors import ConfigError

    key_file = Path(args.chain_key) if args.chain_key else default_chain_key_file()
    if not key_file.exists():  # the executor makes it, not `operator add`
        raise ConfigError('no trace chain key', where=str(key_file),
                          hint='the executor creates it at its first start (trace_chain: '
                               'true); give the one it used with --chain-key FILE')
    key = read_key(key_file)
    status = 0
    for directory in map(Path, _verify_dirs(args)):
        if not directory.is_dir():
            print(f'tool-router: {directory}: trace verify takes directories', file=sys.stderr)
            return 2
        report = verify_directory(directory, key)
        if args.json:
            print(report.model_dump_json())
        elif report.ok:
            print(f'{directory}: chain intact: {report.records} records in {report.files} '
                  f'file(s), {report.manifests} signed manifest(s)')
        else:
            print(f'{directory}: first broken link: {report.first_break}')
        if not args.json:
            for warning in report.warnings:
                print(f'  warning: {warning}')
        if not report.ok or not report.manifests:
            status = 1
    return status


def _show(args: argparse.Namespace) -> int:
    """Print one request's whole story from the trace files (ID, or a unique start of it)."""
    from pathlib import Path

    from tool_router.common.paths import ros_home
    from tool_router.executor.story import find_request, story
    from tool_router.executor.traces import read_traces

    if not args.files:
        print('tool-router trace show: give a REQUEST_ID (then optional files or directories)',
              file=sys.stderr)
        return 2
    request_id, where = args.files[0], [Path(p) for p in args.files[1:]]
    where = where or [ros_home() / 'tool_router' / 'traces']
    # directories are searched with their sub-directories (one per vehicle namespace, say)
    paths = [f for p in where for f in (sorted(p.rglob('*.jsonl')) if p.is_dir() else [p])]
    if not paths:
        print(f'tool-router: no trace files in {", ".join(map(str, where))}', file=sys.stderr)
        return 1
    bad: list[str] = []
    try:
        full_id, mine = find_request((r for path in paths for r in read_traces(path, bad)),
                                     request_id)
    except ValueError as exc:
        print(f'tool-router: {exc}', file=sys.stderr)
        return 2
    if not mine:
        print(f'tool-router: no record of request {request_id} in {len(paths)} trace file(s) '
              f'under {", ".join(map(str, where))}', file=sys.stderr)
        return 1
    if args.json:
        for rec in mine:
            print(rec.model_dump_json())
    else:
        print('\n'.join(story(full_id, mine)))
    if bad:
        print(f'tool-router: skipped {len(bad)} bad line(s); `tool-router trace validate` '
              'lists them', file=sys.stderr)
    return 0


def _tail(args: argparse.Namespace) -> int:
    from tool_router.executor.story import outcome_lines
    from tool_router.executor.traces import record_from_json
    from tool_router.ros.executor_client import follow_traces

    ns = '/' + args.namespace.strip('/') if args.namespace.strip('/') else ''
    topic = args.topic or f'{ns}/executor/traces'

    def show(msg: object) -> None:
        if args.json:
            print(getattr(msg, 'record_json'), flush=True)
            return
        record = record_from_json(getattr(msg, 'record_json'))
        print(f'{record.request_id}  "{record.request_text}"', flush=True)
        print('\n'.join(outcome_lines(record, indent='  ')), flush=True)

    follow_traces(show, topic, args.count, args.timeout)
    return 0


def cmd_confirm(args: argparse.Namespace) -> int:
    """Approve or deny a tool waiting for confirmation, signed with the operator's key."""
    ns = '/' + args.namespace.strip('/') if args.namespace.strip('/') else ''
    if args.list:
        from tool_router.executor.story import confirm_hint
        from tool_router.ros.executor_client import pending_confirmations

        items = pending_confirmations(f'{ns}/executor/pending_confirmations', args.timeout)
        if args.json:
            print(json.dumps(items))
        elif not items:
            print('no confirmation is pending')
        for item in items if not args.json else []:
            hint = confirm_hint(item['request_id'], item['tool'], args.namespace, args.operator)
            print(f"{item['request_id']}  {item['tool']} ({item['risk']})  waiting "
                  f"{item['waiting_s']:.0f} s, {item['remaining_s']:.0f} s left: "
                  f"{hint} (or --deny)")
        return 0
    if not args.request_id or args.approve is None:
        print('tool-router confirm: give REQUEST_ID and --approve or --deny (or --list)',
              file=sys.stderr)
        return 2
    if ns and args.service == '/executor/confirm':
        args.service = f'{ns}/executor/confirm'
    from tool_router.ros.executor_client import OutcomeWatch, call_confirm

    operator_name = args.operator or getpass.getuser()
    signed = None if args.insecure else _sign(args, operator_name)
    # listening before the decision goes out: the record it leads to is not missed
    outcomes = None if args.no_wait else OutcomeWatch(args.namespace)
    try:
        resign = None if args.insecure else (lambda: _sign(args, operator_name))
        resp = call_confirm(args.request_id, args.tool or '', args.approve, operator_name,
                            args.service, args.timeout, signed, resign)
        if args.json and (outcomes is None or not resp.success):
            print(json.dumps({'success': resp.success, 'message': resp.message,
                              'affected_tools': list(resp.affected_tools)}))
        elif not args.json:
            print(resp.message, file=sys.stdout if resp.success else sys.stderr, flush=True)
        if not resp.success:
            return 1
        if outcomes is None:
            return 0
        return _confirmed_outcome(args, outcomes, resp)
    finally:
        if outcomes is not None:
            outcomes.close()


def _confirmed_outcome(args: argparse.Namespace, outcomes: object, resp: object) -> int:
    """Wait for the final record the decision led to; print its tool lines (0: all done)."""
    from tool_router.cli.common import DEFAULT_WAIT_S, print_json
    from tool_router.executor.story import (confirm_hint, namespace_option, outcome_lines,
                                            record_ok, show_hint)

    rid = args.request_id
    decided = set(getattr(resp, 'affected_tools', ()) or ([args.tool] if args.tool else []))
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if args.json else \
        (lambda line: print(line, flush=True))

    def settled(record: object) -> bool:  # the record of this confirmation, not an older one
        return any(t.tool in decided and t.confirmation is not None
                   and t.confirmation.outcome != 'not_requested'
                   for t in getattr(record, 'tools', []))

    others: set[str] = set()

    def on_confirmation(msg: object) -> float:
        tool = str(getattr(msg, 'tool', ''))
        if tool not in decided and tool not in others:
            others.add(tool)
            say(f'{tool} of this request still waits for an operator; the outcome comes once '
                f'it is decided: {confirm_hint(rid, tool, args.namespace, args.operator)}')
            return float(getattr(msg, 'timeout_s', 0.0))
        return 0.0

    wait = getattr(outcomes, 'wait')
    record = wait(rid, DEFAULT_WAIT_S, done=settled, on_confirmation=on_confirmation)
    if record is None:
        print(f'tool-router: no outcome of request {rid} within {DEFAULT_WAIT_S:g} s; '
              f'`{show_hint(rid)}{namespace_option(args.namespace)}`', file=sys.stderr)
        return 3
    # approved: every tool done; denied: what was denied is denied (nothing else is asked)
    ok = record_ok(record) if args.approve else all(
        t.outcome == 'denied' for t in record.tools if t.tool in decided)
    if args.json:
        print_json({'success': True, 'message': getattr(resp, 'message', ''),
                    'affected_tools': sorted(decided),
                    'outcome': record.model_dump(mode='json'), 'ok': ok})
    else:
        for line in outcome_lines(record):
            print(line)
    return 0 if ok else 1


def _sign(args: argparse.Namespace, operator_name: str) -> object:
    """A signed confirmation with the key of --key, or of the operator in the operators file."""
    from tool_router.common import signing

    key, key_id = _key(args, operator_name)
    return signing.sign_confirmation(key, key_id, args.request_id, args.tool or '', args.approve)


def _key(args: argparse.Namespace, operator_name: str) -> tuple[bytes, str]:
    """The key and key id of --key / --key-id / the operator in the operators file."""
    from pathlib import Path

    from tool_router.executor import auth

    path = Path(args.operators) if args.operators else auth.default_operators_file()
    return auth.signing_key(path, operator_name, args.key_id, args.key)


def cmd_operator(args: argparse.Namespace) -> int:
    """Add, list or revoke operator keys (the executor reads them at start-up)."""
    from pathlib import Path

    from tool_router.executor import auth

    path = Path(args.operators) if args.operators else auth.default_operators_file()
    if args.action == 'add':
        if not args.name:
            print('tool-router: operator add needs a NAME', file=sys.stderr)
            return 2
        op = auth.add_operator(path, args.name, args.role)
        reader = 'router' if op.role == 'admin' else 'executor'  # an admin reconfigures routers
        print(f'added {op.name} ({op.role}), key {op.key_id} in '
              f'{auth.key_path(path, op)} (mode 0600); restart the {reader} to load it')
        return 0
    if args.action == 'revoke':
        if not args.name:
            print('tool-router: operator revoke needs a NAME or KEY_ID', file=sys.stderr)
            return 2
        for op in auth.revoke_operator(path, args.name):
            print(f'revoked {op.name} key {op.key_id}; restart the executor to apply it')
        return 0
    data = auth.load_operators_file(path) if path.exists() else auth.OperatorsFile()
    rows = [{'name': op.name, 'role': op.role, 'key_id': op.key_id, 'revoked': op.revoked}
            for op in data.operators]
    if args.json:
        print(json.dumps(rows))
    elif not rows:
        print(f'no operators in {path}')
    else:
        for r in rows:
            state = 'revoked' if r['revoked'] else 'active'
            print(f"{r['name']:16s} {r['role']:16s} {r['key_id']:28s} {state}")
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """List or cancel the executor's condition watches."""
    from tool_router.ros.executor_client import call_service
    from tool_router.srv import CancelWatch, ListWatches

    ns = '/' + args.namespace.strip('/') if args.namespace.strip('/') else ''
    if ns:  # relative to the vehicle's namespace unless given in full
        args.list_service = _in_namespace(ns, args.list_service, '/executor/list_watches')
        args.cancel_service = _in_namespace(ns, args.cancel_service, '/executor/cancel_watch')

    if args.action == 'list':
        # listing changes nothing: the request is its own probe, resent until answered
        resp = call_service(ListWatches, args.list_service,
                            ListWatches.Request(include_ended=args.all), args.timeout,
                            what='the watch list did not arrive')
        watches = [watch_dict(w) for w in resp.watches]
        if args.json:
            print(json.dumps(watches))
        else:
            print(format_watches(watches))
        return 0
    if not args.watch_id and not args.request:
        print('tool-router: watch cancel needs a WATCH_ID or --request ID', file=sys.stderr)
        return 2
    from tool_router.common import signing

    operator_name = args.operator or getpass.getuser()
    key = None if args.insecure else _key(args, operator_name)

    def make() -> CancelWatch.Request:
        request = CancelWatch.Request(watch_id=args.watch_id or '', request_id=args.request or '',
                                      operator_name=operator_name)
        if key is not None:  # signed afresh for each attempt: a resent nonce is a replay
            signed = signing.sign_cancel(key[0], key[1], request.watch_id, request.request_id)
            request.key_id, request.timestamp = signed.key_id, signed.timestamp
            request.nonce, request.signature = signed.nonce, signed.signature
        return request

    resp = call_service(CancelWatch, args.cancel_service, make(), args.timeout,
                        probe=CancelWatch.Request(), resend=make,
                        what='the cancellation was not delivered')
    if args.json:
        print(json.dumps({'success': resp.success, 'message': resp.message,
                          'cancelled': list(resp.cancelled)}))
    else:
        print(resp.message, file=sys.stdout if resp.success else sys.stderr)
    return 0 if resp.success else 1


def _in_namespace(ns: str, service: str, default: str) -> str:
    """``service`` moved under ``ns`` when it is the default name."""
    return f'{ns}{default}' if service == default else service


def watch_dict(w: object) -> dict:
    """A WatchState message as a plain dict (for --json and :func:`format_watches`)."""
    keys = ('watch_id', 'request_id', 'tool', 'condition', 'predicate', 'state', 'armed_at',
            'expires_at', 'samples', 'value', 'last_error', 'reason')
    out = {k: getattr(w, k) for k in keys}
    out['value'] = out['value'] or None
    return out


def format_watches(watches: list[dict]) -> str:
    """One line per watch: id, state, tool, predicate, samples, last value, time left."""
    import time

    if not watches:
        return 'no watches'
    lines = []
    for w in watches:
        left = w['expires_at'] - time.time()
        when = f'expires in {left:.0f} s' if w['state'] == 'armed' else w['reason']
        value = '' if w['value'] is None else f"  last {w['value']}"
        error = f"  ({w['last_error']})" if w['last_error'] else ''
        lines.append(f"{w['watch_id']}  {w['state']:9s} {w['tool']} when {w['predicate']}  "
                     f"[request {w['request_id']}, {w['samples']} samples{value}, {when}]{error}")
    return '\n'.join(lines)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the executor's sub-commands to the ``tool-router`` parser."""
    p = sub.add_parser('trace', help='summarise, validate or follow executor traces')
    p.add_argument('action', choices=['summary', 'validate', 'tail', 'verify', 'show'],
                   help='summary: counts and latencies; validate: check every record; '
                        'tail: follow the trace topic; verify: check the hash chain and '
                        'its signed manifests, report the first broken link; show ID: one '
                        "request's whole story (decisions, confirmations, outcomes, watches)")
    p.add_argument('files', nargs='*', help='JSONL files or directories, read with their '
                                            'subdirectories (default: '
                                            '$ROS_HOME/tool_router/traces); show: the request '
                                            'id first')
    p.add_argument('--json', action='store_true', help='machine-readable output')
    p.add_argument('--chain-key', default='', help='verify: the chain key file (default: '
                                                   '$ROS_HOME/tool_router/keys/trace-chain.key)')
    p.add_argument('--namespace', default='',
                   help="vehicle namespace, e.g. uav1: summary: only its records (without: "
                        'one summary per namespace); verify: its directory (traces/uav1); '
                        'tail: /uav1/executor/traces; show searches every namespace')
    p.add_argument('--topic', default='', help='tail: trace topic (default /executor/traces, '
                                               'in the --namespace)')
    p.add_argument('--count', type=int, default=0, help='tail: stop after N records')
    p.add_argument('--timeout', type=float, default=0.0, help='tail: stop after S seconds')
    p.set_defaults(handler=cmd_trace)

    p = sub.add_parser('confirm', help='approve or deny a tool waiting for confirmation '
                                       '(--list: what is waiting)')
    p.add_argument('request_id', nargs='?', default='',
                   help='the request whose tool waits (from the trace, the confirmation '
                        'request or --list)')
    p.add_argument('tool', nargs='?', default='', help='tool name (default: every pending tool '
                                                       'of the request)')
    group = p.add_mutually_exclusive_group()
    group.add_argument('--approve', dest='approve', action='store_true', default=None,
                       help='let the tool run')
    group.add_argument('--deny', dest='approve', action='store_false',
                       help='refuse the tool (recorded as confirmation_denied)')
    group.add_argument('--list', action='store_true',
                       help='show the confirmations still waiting (works for late joiners)')
    p.add_argument('--namespace', default='', help='vehicle namespace, e.g. uav1')
    add_signing_args(p, 'the decision')
    p.add_argument('--insecure', action='store_true',
                   help='send unsigned (only an executor with insecure_confirmations accepts it)')
    p.add_argument('--service', default='/executor/confirm', help='confirmation service name')
    p.add_argument('--timeout', type=float, default=10.0, help='seconds to wait for the service')
    p.add_argument('--json', action='store_true', help='machine-readable output')
    p.add_argument('--no-wait', action='store_true',
                   help='return once the decision is taken, without waiting for what the '
                        'vehicle did')
    p.set_defaults(handler=cmd_confirm)

    p = sub.add_parser('operator', help='add, list or revoke operator keys for confirmations')
    p.add_argument('action', choices=['add', 'list', 'revoke'],
                   help='add: new key (0600) for NAME; list: operators; revoke: NAME or KEY_ID')
    p.add_argument('name', nargs='?', default='', help='add/revoke: operator name (or key id)')
    p.add_argument('--role', default='pilot', help='add: role (shipped: pilot, '
                                                   'payload_operator, observer, admin)')
    p.add_argument('--operators', default='', help='operators file (default: '
                                                   '$ROS_HOME/tool_router/operators.yaml)')
    p.add_argument('--json', action='store_true', help='list: machine-readable output')
    p.set_defaults(handler=cmd_operator)

    p = sub.add_parser('watch', help='list or cancel condition watches')
    p.add_argument('action', choices=['list', 'cancel'],
                   help='list: the armed watches; cancel: one watch or a request\'s watches')
    p.add_argument('watch_id', nargs='?', default='', help='cancel: the watch id')
    p.add_argument('--request', default='', help='cancel: every watch of this request id')
    p.add_argument('--all', action='store_true', help='list: also recently ended watches')
    add_signing_args(p, 'cancel')
    p.add_argument('--insecure', action='store_true',
                   help='cancel: send unsigned (only an executor with insecure_confirmations '
                        'accepts it)')
    p.add_argument('--namespace', default='', help='vehicle namespace, e.g. uav1')
    p.add_argument('--list-service', default='/executor/list_watches',
                   help='list: service name')
    p.add_argument('--cancel-service', default='/executor/cancel_watch',
                   help='cancel: service name')
    p.add_argument('--timeout', type=float, default=10.0, help='seconds to wait for the service')
    p.add_argument('--json', action='store_true', help='machine-readable output')
    p.set_defaults(handler=cmd_watch)
