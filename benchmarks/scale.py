"""Routing at catalog scale: lcr p50/p99, start time and memory at 42 / 800 / 5,000 tools.

    PYTHONPATH=. python benchmarks/scale.py --sizes 42,800,5000 -n 100 --json /tmp/scale.json
    PYTHONPATH=. python benchmarks/scale.py --smoke                     # tiny sizes (CI)

Each size runs in its own process (so that its resident memory is its own): the catalog
is the shipped one (42) or benchmarks/catalog_gen.py's, the index persistent under
``--chroma-dir`` (built on the first run, reused after: ``--chroma-dir`` keeps it between
runs) or in memory (``--smoke``). In that process, interleaved request by request so that
load changes hit all alike, on the same development requests:

* floor: one forward pass of the request (the router's encoder);
* ``lcr`` with exact scoring (every record, a dense product);
* ``lcr`` with an HNSW shortlist (Chroma's top records per fragment, then exact scoring of
  the shortlisted tools only), and how often its selection differs from the exact one;
* ``lcr`` with the centroid shortlist (the tools whose record centroids are nearest, in
  numpy, then exact scoring of those tools only), and how often it differs from exact.

Reported: start-up seconds (router construction, index reused or built), resident memory
after start and peak, the three p50/p99, ratios to the floor and to the 42-tool figures of
the same run. Then all sizes again in one process sharing one encoder, request by request
(``lcr`` as configured: exact or shortlist by ``exact_max_records``), so that the ratio to
the 42-tool p50 does not depend on the load of different minutes. The shared machine makes
absolute figures noisy: compare ratios of one run.
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
sys.path[:0] = [str(ROOT), str(ROOT / 'benchmarks')]

from tool_router.common.stats import percentile as pct  # noqa: E402


def memory_mb() -> dict[str, float]:
    """VmRSS and VmHWM (peak) of this process, in MB."""
    out = {}
    for line in Path('/proc/self/status').read_text().splitlines():
        key, _, rest = line.partition(':')
        if key in ('VmRSS', 'VmHWM'):
            out[key] = int(rest.split()[0]) / 1024.0
    return out


def size_overrides(size: int, work: Path, chroma_dir: Path | None,
                   threads: int | None) -> dict[str, Any]:
    """Router overrides for one catalog size: its generated catalog (the shipped one at 42),
    its index (in memory, or persistent under ``chroma_dir``), ``--threads`` if given."""
    import catalog_gen

    overrides: dict[str, Any] = {} if threads is None else {'encoder.threads': threads}
    if size != 42:
        overrides['catalog'] = str(catalog_gen.write(
            size, work / f'catalog{size}.yaml', ROOT / 'config' / 'catalog.yaml'))
    if chroma_dir is None:
        overrides['chroma_ephemeral'] = True
    else:
        overrides['chroma_path'] = str(chroma_dir / f'tools{size}')
    return overrides


def one_size(n_tools: int, n: int, chroma_dir: Path | None,
             threads: int | None) -> dict[str, Any]:
    """Measure one catalog size in this process (see the module docstring)."""
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    base = memory_mb()
    overrides = size_overrides(n_tools, Path(tempfile.mkdtemp(prefix='tr-scale-')),
                               chroma_dir, threads)
    t0 = time.perf_counter()
    router = Router(load_router_config(overrides=overrides))
    start_s = time.perf_counter() - t0
    state = dict(router.index.state)
    after_start = memory_mb()
    index = router.index
    inner = getattr(router.encoder, 'inner', router.encoder)
    lines = (ROOT / 'benchmarks' / 'data' / 'dev.jsonl').read_text().splitlines()
    pool = [json.loads(line)['request'] for line in lines]
    texts = [pool[i % len(pool)] for i in range(n)]

    centroids = index._centroids()

    def lcr(text: str, mode: str) -> tuple[float, list[str]]:
        index.exact = mode == 'exact'
        index._centroid_vectors = centroids if mode == 'centroid' else None
        t = time.perf_counter()
        tools = router.route(text, 'lcr').tools
        return (time.perf_counter() - t) * 1000.0, tools

    def floor(text: str) -> float:
        t = time.perf_counter()
        inner.encode([text])
        return (time.perf_counter() - t) * 1000.0

    for text in texts[:5]:  # warm up (and open Chroma for the shortlist)
        for mode in ('exact', 'hnsw', 'centroid'):
            lcr(text, mode)
        floor(text)
    fl, ex, hn, ce, differ, c_differ = [], [], [], [], 0, 0
    for text in texts:
        fl.append(floor(text))
        ms, exact_tools = lcr(text, 'exact')
        ex.append(ms)
        ms, hnsw_tools = lcr(text, 'hnsw')
        hn.append(ms)
        differ += exact_tools != hnsw_tools
        ms, centroid_tools = lcr(text, 'centroid')
        ce.append(ms)
        c_differ += exact_tools != centroid_tools
    end = memory_mb()
    return {
        'tools': n_tools,
        'records': len(index.tool_records) + len(index.phrase_records),
        'start_s': start_s,
        'index_state': state,
        'build_s': index.build_seconds,
        'rss_start_mb': after_start['VmRSS'] - base['VmRSS'],
        'rss_mb': end['VmRSS'],
        'peak_rss_mb': end['VmHWM'],
        'floor_p50_ms': pct(fl, 50),
        'exact_p50_ms': pct(ex, 50), 'exact_p99_ms': pct(ex, 99),
        'hnsw_p50_ms': pct(hn, 50), 'hnsw_p99_ms': pct(hn, 99),
        'hnsw_selections_differ': differ, 'n': n,
        'centroid_p50_ms': pct(ce, 50), 'centroid_p99_ms': pct(ce, 99),
        'centroid_selections_differ': c_differ,
        'load_average': list(os.getloadavg()),
    }


def interleaved(sizes: list[int], n: int, chroma_dir: Path | None, threads: int | None
                ) -> dict[str, Any]:
    """All sizes in one process, one encoder, request by request: ratios free of load drift."""
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    work = Path(tempfile.mkdtemp(prefix='tr-scale-'))
    routers: dict[int, Any] = {}
    encoder = None
    for size in sizes:
        overrides = size_overrides(size, work, chroma_dir, threads)
        routers[size] = Router(load_router_config(overrides=overrides), encoder=encoder)
        encoder = routers[size].encoder
    inner = getattr(encoder, 'inner', encoder)
    lines = (ROOT / 'benchmarks' / 'data' / 'dev.jsonl').read_text().splitlines()
    pool = [json.loads(line)['request'] for line in lines]
    texts = [pool[i % len(pool)] for i in range(n)]
    lat: dict[str, list[float]] = {'floor': [], **{str(s): [] for s in sizes}}
    for i, text in enumerate(texts + texts[:5]):
        t = time.perf_counter()
        inner.encode([text])
        floor_ms = (time.perf_counter() - t) * 1000.0
        row = {}
        for size, router in routers.items():
            t = time.perf_counter()
            router.route(text, 'lcr')
            row[str(size)] = (time.perf_counter() - t) * 1000.0
        if i >= 5:  # the first five warm up
            lat['floor'].append(floor_ms)
            for key, ms in row.items():
                lat[key].append(ms)
    base = pct(lat[str(sizes[0])], 50)
    return {
        'floor_p50_ms': pct(lat['floor'], 50),
        'sizes': {key: {'p50_ms': pct(v, 50), 'p99_ms': pct(v, 99),
                        'over_first_p50': pct(v, 50) / base,
                        'search': routers[int(key)].index.health()['search']}
                  for key, v in lat.items() if key != 'floor'},
        'n': n, 'load_average': list(os.getloadavg()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--sizes', default='42,800,5000')
    ap.add_argument('-n', type=int, default=100, help='requests per size')
    ap.add_argument('--chroma-dir', type=Path, help='persistent indexes (kept between runs)')
    ap.add_argument('--threads', type=int, default=None,
                    help='encoder.threads (default: as configured, config/router.yaml)')
    ap.add_argument('--smoke', action='store_true', help='sizes 42,120, 6 requests, in memory')
    ap.add_argument('--json', type=Path)
    ap.add_argument('--one', type=int, help=argparse.SUPPRESS)
    ap.add_argument('--together', action='store_true', help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
    sizes = [int(s) for s in ('42,120' if args.smoke else args.sizes).split(',')]
    if args.together:
        print(json.dumps(interleaved(sizes, args.n, args.chroma_dir, args.threads)))
        return
    if args.one is not None:
        print(json.dumps(one_size(args.one, args.n, args.chroma_dir, args.threads)))
        return
    if args.smoke:
        args.n, args.chroma_dir = 6, None

    def child(extra: list[str]) -> dict[str, Any]:
        cmd = [sys.executable, __file__, *extra, '-n', str(args.n),
               '--sizes', ','.join(map(str, sizes))]
        if args.threads is not None:
            cmd += ['--threads', str(args.threads)]
        if args.chroma_dir:
            cmd += ['--chroma-dir', str(args.chroma_dir)]
        path = str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', '')
        env = {**os.environ, 'PYTHONPATH': path}
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        lines = [line for line in out.stdout.splitlines() if line.startswith('{')]
        if out.returncode or not lines:
            raise SystemExit(f'{extra} failed:\n{out.stderr[-3000:]}')
        print(f'{extra} measured', file=sys.stderr, flush=True)
        return dict(json.loads(lines[-1]))

    rows = [child(['--one', str(size)]) for size in sizes]
    together = child(['--together'])
    small = next((r for r in rows if r['tools'] == 42), rows[0])
    for r in rows:
        r['exact_over_floor'] = r['exact_p50_ms'] / r['floor_p50_ms']
        r['hnsw_over_floor'] = r['hnsw_p50_ms'] / r['floor_p50_ms']
        r['exact_over_42'] = r['exact_over_floor'] / small['exact_over_floor']
        r['hnsw_over_42'] = r['hnsw_over_floor'] / small['exact_over_floor']
        r['centroid_over_42'] = (r['centroid_p50_ms'] / r['floor_p50_ms']
                                 / small['exact_over_floor'])
    print_table(rows)
    floor = together['floor_p50_ms']
    print(f'\nAll sizes in one process, interleaved (floor p50 {floor:.1f} ms):')
    print('| tools | search | lcr p50 / p99 | p50 over the first size |\n|---|---|---|---|')
    for key, v in together['sizes'].items():
        print(f"| {key} | {v['search']} | {v['p50_ms']:.1f} / {v['p99_ms']:.1f} ms "
              f"| {v['over_first_p50']:.2f}x |")
    if args.json:
        args.json.write_text(json.dumps({'sizes': rows, 'together': together}, indent=2))


def print_table(rows: list[dict[str, Any]]) -> None:
    print('| tools (records) | start s (index) | RSS MB (peak) | floor p50 | exact p50 / p99 '
          '| HNSW shortlist p50 / p99 | centroid shortlist p50 / p99 '
          '| exact / HNSW p50 over floor, vs 42 | centroid vs 42 | HNSW / centroid differ |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for r in rows:
        state = ','.join(sorted(set(r['index_state'].values())))
        print(f"| {r['tools']} ({r['records']}) | {r['start_s']:.1f} ({state}) "
              f"| {r['rss_mb']:.0f} ({r['peak_rss_mb']:.0f}) | {r['floor_p50_ms']:.1f} ms "
              f"| {r['exact_p50_ms']:.1f} / {r['exact_p99_ms']:.1f} ms "
              f"| {r['hnsw_p50_ms']:.1f} / {r['hnsw_p99_ms']:.1f} ms "
              f"| {r['centroid_p50_ms']:.1f} / {r['centroid_p99_ms']:.1f} ms "
              f"| {r['exact_over_floor']:.2f}x / {r['hnsw_over_floor']:.2f}x; "
              f"{r['exact_over_42']:.2f}x / {r['hnsw_over_42']:.2f}x "
              f"| {r['centroid_over_42']:.2f}x "
              f"| {r['hnsw_selections_differ']} / {r['centroid_selections_differ']} of {r['n']} |")


if __name__ == '__main__':
    main()
