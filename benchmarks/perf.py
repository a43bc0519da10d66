"""Performance of the router, every figure of issue 11 in one run: one table and JSON.

    PYTHONPATH=. python benchmarks/perf.py [--json out.json]        # full sizes (minutes)
    PYTHONPATH=. python benchmarks/perf.py --smoke                  # tiny sizes (CI)

Measured side by side in one run, so that ratios are meaningful on a busy machine:

* floor: one forward pass of the full request text with the router's encoder settings;
* ``lcr`` in-process (``Router.route``) p50 / p99, idle;
* the same two with two CPU-bound processes started by this benchmark beside the router
  (one plain Python loop, one torch matrix-multiplication loop with torch's default threads,
  as a perception model would run), and one forward pass with 1 vs the default thread count
  under that load (the thread policy);
* ``/route_request`` round trip with one client, then 8 client processes at once
  (throughput, p99, unanswered, busy answers) against a real router node;
* cold start: router node process start -> first answer with the persistent index built
  (and the first start, which builds it);
* a synthetic 5,000-tool catalog (benchmarks/catalog_gen.py): index build time, memory,
  ``lcr`` p50 against the 42-tool p50 of this run.

Figures depend on the machine and its load; the JSON records the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'benchmarks'))

from tool_router.common.stats import percentile  # noqa: E402

HOG_PLAIN = 'while True:\n    pass\n'
HOG_TORCH = (
    'import torch\n'
    'a = torch.randn(512, 512)\n'
    'while True:\n'
    '    a = torch.tanh(a @ a)\n'
)


def pct(values: list[float], q: float) -> float:
    return percentile(values, q)


def timed(fn: Any, items: list[Any]) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def rss_mb() -> float:
    for line in Path('/proc/self/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024.0
    return float('nan')


def ros_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env['PYTHONPATH'] = str(ROOT) + os.pathsep + env.get('PYTHONPATH', '')
    return env


class Hogs:
    """Two CPU-bound processes (plain loop, torch matmul loop) for the loaded figures."""

    def __enter__(self) -> 'Hogs':
        self.procs = [
            subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
            for code in (HOG_PLAIN, HOG_TORCH)
        ]
        time.sleep(2.0)  # let torch import and start multiplying
        return self

    def __exit__(self, *exc: Any) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def node_argv(params: list[str]) -> list[str]:
    cmd = [sys.executable, '-m', 'tool_router.ros.router_node', '--ros-args']
    for p in params:
        cmd += ['-p', p]
    return cmd


def start_node(params: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(node_argv(params), cwd=ROOT, env=ros_env(),
                            stdout=log.open('w'), stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- client worker (a separate process per client) -----------------------------------
def client_worker(args: argparse.Namespace) -> None:
    texts = json.loads(Path(args.texts).read_text())
    from tool_router.ros.client import RouteClient

    with RouteClient(wait_s=120) as client:
        for t in texts[:3]:  # warm up: discovery of the reply path
            try:
                client.call(t, timeout_s=args.timeout)
            except Exception:  # noqa: BLE001 - counted below only for the measured calls
                pass
        while time.time() < args.start_at:
            time.sleep(0.001)
        lat, unanswered, busy, errors = [], 0, 0, 0
        t0 = time.perf_counter()
        for t in texts:
            start = time.perf_counter()
            try:
                resp = client.call(t, timeout_s=args.timeout)
            except Exception:  # noqa: BLE001 - no answer within the timeout
                unanswered += 1
                continue
            lat.append((time.perf_counter() - start) * 1000.0)
            if not resp.success:
                busy += resp.message == 'busy'
                errors += resp.message != 'busy'
        elapsed = time.perf_counter() - t0
        # The figures go out before the client closes: closing a node on rclpy's events
        # executor once hung for minutes (destroy_node), after every call was answered.
        print(json.dumps({'lat': lat, 'unanswered': unanswered, 'busy': busy, 'errors': errors,
                          'elapsed': elapsed, 'n': len(texts)}), flush=True)


def run_clients(texts: list[str], clients: int, per_client: int, timeout: float,
                tmp: Path) -> dict[str, Any]:
    files = []
    for c in range(clients):
        chunk = [texts[(c * per_client + i) % len(texts)] for i in range(per_client)]
        f = tmp / f'client{c}.json'
        f.write_text(json.dumps(chunk))
        files.append(f)
    start_at = time.time() + 8.0 + 2.0 * clients  # time for every client to start and warm up
    procs = [
        subprocess.Popen([sys.executable, __file__, '--client-worker', '--texts', str(f),
                          '--start-at', str(start_at), '--timeout', str(timeout)],
                         cwd=ROOT, env=ros_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
        for f in files
    ]
    results, stuck = [], 0
    for p in procs:
        assert p.stdout is not None
        lines = []
        for line in p.stdout:  # read up to the figures only: the process may hang after them
            if line.startswith('{'):
                lines.append(line)
                break
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:  # answered everything, then hung while closing
            p.kill()
            p.wait()
            stuck += 1
        results.append(json.loads(lines[0]) if lines else
                       {'lat': [], 'unanswered': per_client, 'busy': 0, 'errors': 0,
                        'elapsed': float('nan'), 'n': per_client})
    lat = [x for r in results for x in r['lat']]
    span = max(r['elapsed'] for r in results)
    return {
        'clients': clients, 'requests': clients * per_client,
        'throughput_rps': len(lat) / span if span else float('nan'),
        'p50_ms': pct(lat, 50), 'p99_ms': pct(lat, 99),
        'unanswered': sum(r['unanswered'] for r in results),
        'busy': sum(r['busy'] for r in results),
        'errors': sum(r['errors'] for r in results),
        'clients_hung_at_close': stuck,
    }


def router_counters(wait_s: float = 10.0) -> dict[str, float]:
    """The router's own counters from one fresh /diagnostics message (batching, busy)."""
    from diagnostic_msgs.msg import DiagnosticArray

    from tool_router.ros.client import RouteClient

    got: dict[str, float] = {}

    def on_diag(msg: Any) -> None:
        for status in msg.status:
            if status.name == 'tool_router: router':
                for kv in status.values:
                    try:
                        got[kv.key] = float(kv.value)
                    except ValueError:
                        pass

    with RouteClient(wait_s=60) as client:
        client.node.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 10)
        deadline = time.perf_counter() + wait_s
        while 'encoder_batches' not in got and time.perf_counter() < deadline:
            client.session.spin_once(0.2)
    return got


def wait_first_answer(text: str, deadline_s: float) -> float:
    """Seconds until /route_request answers ``text`` successfully (from the call of this)."""
    from tool_router.ros.client import RouteClient

    start = time.perf_counter()
    with RouteClient(wait_s=deadline_s) as client:
        while time.perf_counter() - start < deadline_s:
            resp = client.call(text, timeout_s=deadline_s)
            if resp.success:
                return time.perf_counter() - start
            time.sleep(0.05)  # configured but not active yet
    raise RuntimeError('no successful answer')


def cold_start(tmp: Path, text: str) -> dict[str, Any]:
    """Process start -> first answer: first with an index build, then with the index built."""
    chroma = tmp / 'chroma'
    out: dict[str, Any] = {}
    for label in ('cold_start_build_s', 'cold_start_s'):
        log = tmp / f'{label}.log'
        t0 = time.perf_counter()
        proc = start_node([f'chroma_path:={chroma}'], log)
        try:
            wait_first_answer(text, 180)
            out[label] = time.perf_counter() - t0
        finally:
            stop(proc)
        out[label[:-2] + '_log'] = [
            line for line in log.read_text().splitlines() if 'configured in' in line
        ][-1:]
    return out


# -- the run --------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--smoke', action='store_true', help='tiny sizes (CI): completes quickly')
    ap.add_argument('-n', type=int, default=300, help='requests per in-process figure')
    ap.add_argument('--ros-n', type=int, default=200, help='single-client round trips')
    ap.add_argument('--clients', type=int, default=8)
    ap.add_argument('--per-client', type=int, default=100)
    ap.add_argument('--big', type=int, default=5000, help='tools in the synthetic catalog')
    ap.add_argument('--big-n', type=int, default=100, help='requests on the synthetic catalog')
    ap.add_argument('--skip', default='', help='comma list: loaded,ros,clients,cold,big')
    ap.add_argument('--json', type=Path, help='also write the figures here')
    ap.add_argument('--nice', type=int, default=0,
                    help='also measure the loaded rows with the router at this priority '
                         '(serving.nice, e.g. -10; needs CAP_SYS_NICE), interleaved')
    ap.add_argument('-p', '--param', action='append', default=[],
                    help='router parameter override NAME=VALUE (e.g. encoder.backend=onnx)')
    # client worker mode (internal)
    ap.add_argument('--client-worker', action='store_true', help=argparse.SUPPRESS)
    ap.add_argument('--texts', help=argparse.SUPPRESS)
    ap.add_argument('--start-at', type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument('--timeout', type=float, default=30.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    from tool_router.ros.domain import private_domain

    private_domain()  # inherited by the client workers and the node
    os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
    if args.client_worker:
        client_worker(args)
        return
    if args.smoke:
        args.n, args.ros_n, args.clients, args.per_client = 8, 8, 2, 4
        args.big, args.big_n = 120, 8
    skip = set(filter(None, args.skip.split(',')))
    figures = run(args, skip)
    print_table(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=float))


def overrides_from(params: list[str]) -> dict[str, Any]:
    import yaml

    out = {}
    for item in params:
        name, _, value = item.partition('=')
        out[name] = yaml.safe_load(value)
    return out


def run(args: argparse.Namespace, skip: set[str]) -> dict[str, Any]:
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    lines = (ROOT / 'benchmarks' / 'data' / 'dev.jsonl').read_text().splitlines()
    pool = [json.loads(line)['request'] for line in lines]
    texts = [pool[i % len(pool)] for i in range(args.n)]
    fig: dict[str, Any] = {'load_average_start': list(os.getloadavg()), 'cpus': os.cpu_count(),
                           'params': args.param, 'smoke': args.smoke}
    overrides = {'chroma_ephemeral': True, **overrides_from(args.param)}
    router = Router(load_router_config(overrides=overrides))
    enc = router.encoder
    inner = getattr(enc, 'inner', enc)
    fig['encoder'] = {'backend': getattr(inner, 'backend', '?'),
                      'threads': getattr(inner, 'threads', '?'), 'device': inner.device}

    def floor(t: str) -> None:
        inner.encode([t])

    def lcr(t: str) -> None:
        router.route(t, 'lcr')

    for t in texts[:10]:
        lcr(t)
        floor(t)
    # Interleave the two so that load changes hit both alike.
    fl, lc = [], []
    for t in texts:
        fl += timed(floor, [t])
        lc += timed(lcr, [t])
    fig['floor_p50_ms'] = pct(fl, 50)
    fig['floor_p99_over_p50'] = pct(fl, 99) / fig['floor_p50_ms']  # lengths and load alone
    fig['lcr_p50_ms'], fig['lcr_p99_ms'] = pct(lc, 50), pct(lc, 99)
    fig['lcr_over_floor'] = fig['lcr_p50_ms'] / fig['floor_p50_ms']
    fig['lcr_p99_over_p50'] = fig['lcr_p99_ms'] / fig['lcr_p50_ms']

    if 'loaded' not in skip:
        import torch

        default_threads = os.cpu_count() or 1
        with Hogs():
            # 'loaded_*' at the process's priority, 'loaded_nice_*' at --nice
            for arm, (fl_a, lc_a) in loaded_runs(texts, floor, lcr, args.nice, fig).items():
                key = 'loaded_' if arm == 'default' else f'loaded_{arm}_'
                fig[f'{key}floor_p50_ms'] = pct(fl_a, 50)
                fig[f'{key}lcr_p50_ms'] = pct(lc_a, 50)
                fig[f'{key}lcr_p99_ms'] = pct(lc_a, 99)
                fig[f'{key}over_idle'] = fig[f'{key}lcr_p50_ms'] / fig['lcr_p50_ms']
            few = texts[: max(5, len(texts) // 5)]
            encoders = thread_encoders(router, inner, default_threads)
            for n_threads, fn in encoders.items():
                fig[f'loaded_forward_{n_threads}thr_p50_ms'] = pct(timed(fn, few), 50)
        for n_threads, fn in encoders.items():
            fig[f'idle_forward_{n_threads}thr_p50_ms'] = pct(timed(fn, few), 50)
        if getattr(inner, 'backend', '') == 'torch':
            torch.set_num_threads(int(getattr(inner, 'threads', 1) or 1))

    save(args, fig)
    params = ['chroma_ephemeral:=true'] + [p.replace('=', ':=', 1) for p in args.param]
    with tempfile.TemporaryDirectory(prefix='tr-perf-') as tmpdir:
        tmp = Path(tmpdir)
        if not {'ros', 'clients'} <= skip:
            node = start_node(params, tmp / 'node.log')
            try:
                from tool_router.ros.client import RouteClient

                wait_first_answer(texts[0], 180)
                if 'ros' not in skip:
                    with RouteClient(wait_s=60) as client:
                        for t in texts[:10]:
                            client.call(t, 'lcr')
                        ros_texts = texts[: args.ros_n]
                        rt, node_ms = [], []
                        t0 = time.perf_counter()
                        for t in ros_texts:
                            start = time.perf_counter()
                            resp = client.call(t, 'lcr')
                            rt.append((time.perf_counter() - start) * 1000.0)
                            node_ms.append(resp.latency_ms)
                        single_rate = len(ros_texts) / (time.perf_counter() - t0)
                    # The in-process p50 again now, for a same-moment comparison.
                    lc_now = timed(lcr, ros_texts)
                    fig['ros_p50_ms'], fig['ros_p99_ms'] = pct(rt, 50), pct(rt, 99)
                    fig['ros_node_p50_ms'] = pct(node_ms, 50)
                    fig['ros_inproc_now_p50_ms'] = pct(lc_now, 50)
                    fig['ros_overhead_ms'] = fig['ros_p50_ms'] - fig['ros_inproc_now_p50_ms']
                    fig['single_client_rps'] = single_rate
                if 'clients' not in skip:
                    before = router_counters()
                    c = run_clients(pool, args.clients, args.per_client, 30.0, tmp)
                    after = router_counters()
                    # Forward passes the concurrent requests shared (calls per pass).
                    for key in ('encoder_batches', 'encoder_batched_calls'):
                        if key in after:
                            c[key] = after[key] - before.get(key, 0.0)
                    if c.get('encoder_batches'):
                        c['calls_per_pass'] = c['encoder_batched_calls'] / c['encoder_batches']
                    fig['clients'] = c
                    if 'single_client_rps' in fig:
                        fig['clients_throughput_ratio'] = c['throughput_rps'] / fig[
                            'single_client_rps']
                        fig['clients_p99_over_single_p50'] = c['p99_ms'] / fig['ros_p50_ms']
            finally:
                stop(node)
            save(args, fig)
        if 'cold' not in skip:
            fig.update(cold_start(tmp, texts[0]))
            save(args, fig)
        if 'big' not in skip:
            fig.update(big_catalog(args, tmp, pool, overrides, fig['lcr_p50_ms'], router.encoder))
    fig['load_average_end'] = list(os.getloadavg())
    return fig


def loaded_runs(texts: list[str], floor: Any, lcr: Any, nice: int,
                fig: dict[str, Any]) -> dict[str, tuple[list[float], list[float]]]:
    """Floor and lcr latencies beside the hogs: at the process's priority ('default') and,
    with ``nice``, at that priority too ('nice', serving.nice), alternating blocks of 10."""
    from tool_router.routing.serving import set_priority

    base = os.getpriority(os.PRIO_PROCESS, 0)
    arms = ['default']
    if nice and nice >= base:  # going back to the lower base would need the privilege
        fig['nice_warning'] = f'--nice {nice} is not below the process\'s nice {base}'
    elif nice:
        problem = set_priority(nice)
        if problem:
            fig['nice_warning'] = problem
        else:
            arms.append('nice')
            set_priority(base)  # a raised value is always permitted
    out: dict[str, tuple[list[float], list[float]]] = {arm: ([], []) for arm in arms}
    try:
        for b in range(0, len(texts), 10):
            for arm in arms if (b // 10) % 2 == 0 else arms[::-1]:
                set_priority(nice if arm == 'nice' else base)
                for t in texts[b:b + 10]:
                    out[arm][0].extend(timed(floor, [t]))
                    out[arm][1].extend(timed(lcr, [t]))
    finally:
        set_priority(base)
    if nice:
        fig['nice'] = nice
    return out


def thread_encoders(router: Any, inner: Any, cores: int) -> dict[int, Any]:
    """One forward pass with 1 thread and with one per core, same backend and model."""
    from tool_router.routing.embeddings import SentenceTransformerEncoder

    backend = getattr(inner, 'backend', 'torch')
    out: dict[int, Any] = {}
    for n in sorted({1, cores}):
        if backend == 'torch':  # torch threads are per process: set them around each call
            import torch

            def fn(t: str, n: int = n) -> None:
                torch.set_num_threads(n)
                inner.encode([t])
        else:  # ONNX Runtime threads are per session: one session per setting
            enc = SentenceTransformerEncoder(router.config.model, inner.device, backend, n)

            def fn(t: str, enc: Any = enc) -> None:
                enc.encode([t])
        fn('warm up')
        out[n] = fn
    return out


def save(args: argparse.Namespace, fig: dict[str, Any]) -> None:
    """Write the figures so far (a long run interrupted still leaves its figures)."""
    if args.json:
        args.json.write_text(json.dumps(fig, indent=2, default=float))


def big_catalog(args: argparse.Namespace, tmp: Path, pool: list[str],
                overrides: dict[str, Any], small_p50: float, encoder: Any) -> dict[str, Any]:
    import catalog_gen
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    path = catalog_gen.write(args.big, tmp / 'big.yaml', ROOT / 'config' / 'catalog.yaml')
    before = rss_mb()
    t0 = time.perf_counter()
    # The same encoder (model loaded once): build time is embedding + indexing.
    router = Router(load_router_config(overrides={**overrides, 'catalog': str(path)}),
                    encoder=encoder)
    build = time.perf_counter() - t0
    texts = [pool[i % len(pool)] for i in range(args.big_n)]
    for t in texts[:5]:
        router.route(t, 'lcr')
    lat = timed(lambda t: router.route(t, 'lcr'), texts)
    return {
        'big_tools': args.big,
        'big_records': len(router.index.tool_records) + len(router.index.phrase_records),
        'big_build_s': build,
        'big_rss_growth_mb': rss_mb() - before,
        'big_lcr_p50_ms': pct(lat, 50),
        'big_lcr_p99_ms': pct(lat, 99),
        'big_over_small_p50': pct(lat, 50) / small_p50,
    }


def print_table(f: dict[str, Any]) -> None:
    def g(key: str, fmt: str = '{:.1f}') -> str:
        v = f.get(key)
        return fmt.format(v) if isinstance(v, (int, float)) else 'skipped'

    c = f.get('clients', {})
    rows = [
        ('floor: one forward pass of the request',
         f'p50 {g("floor_p50_ms")} ms, p99 {g("floor_p99_over_p50", "{:.2f}")}x p50'),
        ('lcr in-process', f'p50 {g("lcr_p50_ms")} ms ({g("lcr_over_floor", "{:.2f}")}x floor), '
                           f'p99 {g("lcr_p99_ms")} ms ({g("lcr_p99_over_p50", "{:.2f}")}x p50)'),
        ('/route_request round trip, one client',
         f'p50 {g("ros_p50_ms")} ms (+{g("ros_overhead_ms")} ms over in-process '
         f'{g("ros_inproc_now_p50_ms")}), p99 {g("ros_p99_ms")} ms, '
         f'{g("single_client_rps")} req/s'),
        ('lcr in-process beside two busy processes',
         f'p50 {g("loaded_lcr_p50_ms")} ms ({g("loaded_over_idle", "{:.2f}")}x idle), '
         f'p99 {g("loaded_lcr_p99_ms")} ms; floor {g("loaded_floor_p50_ms")} ms'),
        ('lcr in-process beside two busy processes, router at nice '
         f'{f.get("nice", "-")}',
         f'p50 {g("loaded_nice_lcr_p50_ms")} ms ({g("loaded_nice_over_idle", "{:.2f}")}x idle), '
         f'p99 {g("loaded_nice_lcr_p99_ms")} ms; floor {g("loaded_nice_floor_p50_ms")} ms'
         + (f' ({f["nice_warning"]})' if f.get('nice_warning') else '')),
        ('one forward pass, 1 thread / all cores, loaded',
         f'p50 {g("loaded_forward_1thr_p50_ms")} / '
         f'{g("loaded_forward_" + str(f.get("cpus")) + "thr_p50_ms")} ms'),
        ('one forward pass, 1 thread / all cores, idle',
         f'p50 {g("idle_forward_1thr_p50_ms")} / '
         f'{g("idle_forward_" + str(f.get("cpus")) + "thr_p50_ms")} ms'),
        (f'{c.get("clients", "?")} concurrent clients x '
         f'{c.get("requests", 0) // max(1, c.get("clients", 1))}',
         f'{c.get("throughput_rps", float("nan")):.1f} req/s = '
         f'{g("clients_throughput_ratio", "{:.2f}")}x one client; p99 '
         f'{c.get("p99_ms", float("nan")):.1f} ms ({g("clients_p99_over_single_p50", "{:.2f}")}x '
         f'single p50); unanswered {c.get("unanswered", "?")}, busy {c.get("busy", "?")}; '
         f'{c.get("calls_per_pass", float("nan")):.2f} requests per forward pass'
         if c else 'skipped'),
        ('cold start to first answer (index built)', f'{g("cold_start_s", "{:.2f}")} s '
                                                     f'(first start with build '
                                                     f'{g("cold_start_build_s", "{:.2f}")} s)'),
        (f'{f.get("big_tools", "?")}-tool catalog ({f.get("big_records", "?")} records)',
         f'lcr p50 {g("big_lcr_p50_ms")} ms ({g("big_over_small_p50", "{:.2f}")}x 42-tool), '
         f'build {g("big_build_s")} s, +{g("big_rss_growth_mb", "{:.0f}")} MB'),
    ]
    print(f'encoder {f.get("encoder")}, load average {f.get("load_average_start")} -> '
          f'{f.get("load_average_end")}, {f.get("cpus")} CPUs')
    print('| what | figure |\n|---|---|')
    for what, figure in rows:
        print(f'| {what} | {figure} |')
    print(json.dumps(f, default=float))


if __name__ == '__main__':
    main()
