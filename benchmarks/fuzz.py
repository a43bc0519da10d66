"""Fuzzing the router: property-based (hypothesis) and a mutation corpus, in-process and over ROS.

    python benchmarks/fuzz.py            # full run: 100,000 in-process, 5,000 over ROS
    python benchmarks/fuzz.py --inputs 300 --encoder-every 100 --ros 20   # smoke (CI)

In-process, every input goes through the cheap paths that see raw text: request
validation (``check_text``), the safety screen, clause splitting and the LLM reply
parser (the input read as a model's reply); every ``--encoder-every``-th input also goes
through ``Router.route`` with MiniLM, cycling over the local policies, so the encoder
sees a sample and the total stays reachable on a CPU. A quarter of the inputs come from
hypothesis strategies (arbitrary Unicode, JSON-ish text, identifier soups), the rest
from a mutation corpus: data-set requests and injection lines with characters
inserted, deleted, swapped for look-alikes, zero-width or control characters,
spliced together, repeated past the length limit.

Over ROS, ``--ros`` inputs are sent to ``/route_request`` of a router node started
here (plus a few invalid-UTF-8 messages on the request topic), ``--clients`` at a time.

Counted: crashes (an exception other than the router's ``RequestError``), names outside
the catalog in an answer, escaped exceptions in the parser/screen/splitter, unanswered
calls, and whether the node is still alive at the end. Exit code 1 when any is non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'benchmarks'))

LOCAL = ('lcr', 'cdbv3', 'cdbv1', 'cdbv2')

SPECIAL = [
    '\u200b', '\u200d', '\ufeff', '\u202e', '\x00', '\x1b', '\x7f', '\ufffd', '\ud800',
    '\u0430', '\u043e', '\uff3f', '_', '{', '}', '[', ']', '"', '(', ')', '<|im_start|>',
    'assistant:', '\n', '\t', ' and ', ', then ', ' if ', ' not ', 'arm_motors', '🚁', '\u0301',
]
JSONISH = ['{"tools": [', '"arm_motors"', ']', '}', '[[[[', ']]]]', 'null', '"', '\\u0000', ',']


def seeds() -> list[str]:
    """Data-set requests (all splits) and the injection corpus."""
    out: list[str] = []
    for path in sorted((ROOT / 'benchmarks' / 'data').rglob('*.jsonl')):
        for line in path.read_text(encoding='utf-8').splitlines():
            if line.strip():
                row = json.loads(line)
                text = row.get('request', row.get('text'))
                if isinstance(text, str):
                    out.append(text)
    return out


def mutate(rng: random.Random, pool: list[str], limit: int) -> str:
    """One mutation of a seed (or two spliced seeds)."""
    text = rng.choice(pool)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        pos = rng.randint(0, len(text))
        if op == 0:
            text = text[:pos] + rng.choice(SPECIAL) + text[pos:]
        elif op == 1 and text:
            end = min(len(text), pos + rng.randint(1, 12))
            text = text[:pos] + text[end:]
        elif op == 2:
            text = text[:pos] + rng.choice(pool)[rng.randint(0, 20):] + text[pos:]
        elif op == 3:
            text = text.upper() if rng.random() < 0.5 else text.swapcase()
        elif op == 4:
            text = text.translate(str.maketrans('aeo', '\u0430\u0435\u043e'))
        elif op == 5:
            text = (text + ' ') * rng.choice((2, 10, limit // max(1, len(text)) + 2))
        elif op == 6:
            text = text[:pos] + ''.join(rng.choice(JSONISH) for _ in range(5)) + text[pos:]
        elif op == 7:
            text = ''.join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(0, 40)))
        else:
            text = text[:pos] + '\u200b'.join(text[pos:pos + 10]) + text[pos + 10:]
    return text


def hypothesis_inputs(n: int, seed: int) -> list[str]:
    """``n`` texts drawn by hypothesis strategies (run as a property with no assertion)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ident = st.from_regex(r'[a-zA-Z]{1,8}(_[a-z]{1,8}){0,3}', fullmatch=True)
    texts = st.one_of(
        st.text(max_size=300),
        st.text(alphabet=st.characters(codec='utf-8'), max_size=120),
        st.lists(st.one_of(ident, st.sampled_from(JSONISH + SPECIAL)), max_size=30).map(' '.join),
        st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12), ident),
            lambda inner: st.one_of(st.lists(inner, max_size=4),
                                    st.dictionaries(st.text(max_size=6), inner, max_size=3)),
            max_leaves=20,
        ).map(lambda v: json.dumps(v, ensure_ascii=False)),
    )
    drawn: list[str] = []

    @settings(max_examples=n, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(texts)
    def collect(text: str) -> None:
        drawn.append(text)

    del seed  # derandomized: the same draws every run
    collect()
    return drawn[:n]


class Counts(dict[str, int]):
    def bump(self, key: str, by: int = 1) -> None:
        self[key] = self.get(key, 0) + by


def in_process(n: int, encoder_every: int, seed: int, router: Any) -> dict[str, Any]:
    """Run ``n`` inputs through the cheap paths, every ``encoder_every``-th through MiniLM."""
    from tool_router.common.clauses import split_clauses
    from tool_router.common.errors import RequestError
    from tool_router.routing.llm.parse import MAX_NAMES, parse_reply
    from tool_router.routing.router import check_text

    rng = random.Random(seed)
    pool = seeds()
    limit = router.config.max_text_length
    names = set(router.catalog.names)
    n_hyp = n // 4
    inputs: Iterator[str] = iter(hypothesis_inputs(n_hyp, seed))
    counts = Counts(inputs=0, rejected=0, routed=0, crashes=0, out_of_catalog=0, escaped=0)
    failures: list[dict[str, str]] = []
    start = time.perf_counter()

    def guard(stage: str, text: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - counting escapes is the point
            counts.bump('escaped')
            if len(failures) < 20:
                failures.append({'stage': stage, 'input': text[:200], 'error': repr(exc),
                                 'trace': traceback.format_exc(limit=3)})
            return None

    for i in range(n):
        text = next(inputs, None) if i < n_hyp else None
        if text is None:
            text = mutate(rng, pool, limit)
        counts.bump('inputs')
        guard('screen', text, lambda: router.screen.screen(text))
        guard('clauses', text, lambda: split_clauses(text))
        parsed = guard('parse', text, lambda: parse_reply(text, names))
        if parsed is not None and len(parsed.tools) > MAX_NAMES:
            counts.bump('escaped')
        try:
            check_text(text, limit)
        except RequestError:
            counts.bump('rejected')
            continue
        if encoder_every and i % encoder_every == 0:
            policy = LOCAL[(i // encoder_every) % len(LOCAL)]
            try:
                result = router.route(text, policy)
            except RequestError:
                counts.bump('rejected')
                continue
            except Exception as exc:  # noqa: BLE001
                counts.bump('crashes')
                failures.append({'stage': 'route', 'input': text[:200], 'error': repr(exc)})
                continue
            counts.bump('routed')
            if set(result.tools) - names:
                counts.bump('out_of_catalog')
    counts['hypothesis_inputs'] = n_hyp
    return {'counts': dict(counts), 'seconds': round(time.perf_counter() - start, 1),
            'failures': failures}


def over_ros(n: int, clients: int, seed: int, names: set[str], limit: int) -> dict[str, Any]:
    """``n`` mutated inputs to a router node process over /route_request."""
    import rclpy
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.serialization import serialize_message

    from load import private_domain, wait_serving
    from tool_router.msg import Request
    from tool_router.ros.common import client_qos
    from tool_router.srv import RouteRequest

    private_domain()
    rng = random.Random(seed + 1)
    pool = seeds()
    texts = [mutate(rng, pool, limit) for _ in range(n)]
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    node_cmd = [sys.executable, '-m', 'tool_router.ros.router_node', '--ros-args',
                '-p', 'chroma_ephemeral:=true']
    log_path = Path(os.environ.get('TMPDIR', '/tmp')) / f'fuzz_router_{os.getpid()}.log'
    log = open(log_path, 'w')
    proc = subprocess.Popen(node_cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True, cwd=ROOT)
    counts = Counts(sent=0, answered=0, success=0, refused=0, unanswered=0, out_of_catalog=0)
    rclpy.init()
    node = rclpy.create_node('fuzz_client')
    executor = MultiThreadedExecutor(num_threads=2)
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    start = time.perf_counter()
    try:
        wait_serving(log_path, proc)
        client = node.create_client(RouteRequest, '/route_request', qos_profile=client_qos())
        if not client.wait_for_service(timeout_sec=60):
            raise RuntimeError(f'router node did not come up (log: {log_path})')
        pub = node.create_publisher(Request, '/tool_router/requests', 10)
        deadline = time.monotonic() + 30
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        raw = serialize_message(Request(request_id='fuzz-bad-utf8', text='AAAA'))
        for _ in range(3):
            pub.publish(raw.replace(b'AAAA', b'\xff\xfe\xc3('))
        lock = threading.Lock()
        queue = list(enumerate(texts))

        def worker() -> None:
            # one per thread, with a deep reply history (tool_router/ros/common.py)
            client = node.create_client(RouteRequest, '/route_request', qos_profile=client_qos())
            client.wait_for_service(timeout_sec=30)
            while True:
                with lock:
                    if not queue:
                        return
                    _, text = queue.pop()
                safe = text.encode('utf-8', 'replace').decode('utf-8')  # rclpy needs valid str
                event = threading.Event()
                future = client.call_async(RouteRequest.Request(text=safe))
                future.add_done_callback(lambda _f: event.set())
                with lock:
                    counts.bump('sent')
                if not event.wait(30.0):
                    with lock:
                        counts.bump('unanswered')
                    continue
                resp = future.result()
                with lock:
                    if resp is None:
                        counts.bump('unanswered')
                        continue
                    counts.bump('answered')
                    counts.bump('success' if resp.success else 'refused')
                    if set(resp.tools) - names:
                        counts.bump('out_of_catalog')

        threads = [threading.Thread(target=worker) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        alive = proc.poll() is None
        time.sleep(1.0)  # let the node's last log lines reach the file
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        os.killpg(proc.pid, signal.SIGINT)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        log.close()
    text_log = log_path.read_text(errors='replace')
    return {
        'counts': dict(counts),
        'node_alive_at_end': alive,
        'node_exit_code': code,
        'bad_utf8_logged': 'fuzz-bad-utf8 rejected: request is not valid UTF-8' in text_log,
        'tracebacks_in_node_log': text_log.count('Traceback'),
        'seconds': round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--inputs', type=int, default=100_000, help='in-process inputs')
    ap.add_argument('--encoder-every', type=int, default=50,
                    help='every Nth in-process input also routed through MiniLM (0 = none)')
    ap.add_argument('--ros', type=int, default=5_000, help='inputs over ROS (0 = skip)')
    ap.add_argument('--clients', type=int, default=4, help='concurrent ROS clients')
    ap.add_argument('--seed', type=int, default=13)
    ap.add_argument('--out', default='', help='write the JSON report here')
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    router = Router(load_router_config(overrides={'chroma_ephemeral': True}))
    report: dict[str, Any] = {'args': vars(args)}
    report['in_process'] = in_process(args.inputs, args.encoder_every, args.seed, router)
    if args.ros:
        report['ros'] = over_ros(args.ros, args.clients, args.seed, set(router.catalog.names),
                                 router.config.max_text_length)
    ip = report['in_process']['counts']
    bad = ip['crashes'] + ip['out_of_catalog'] + ip['escaped']
    if 'ros' in report:
        r = report['ros']
        bad += r['counts']['unanswered'] + r['counts']['out_of_catalog']
        bad += (not r['node_alive_at_end']) + r['tracebacks_in_node_log']
        bad += not r['bad_utf8_logged']
    report['problems'] = bad
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text + '\n', encoding='utf-8')
    print(text)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
