"""The router's CUDA path against its CPU path, on one machine that has CUDA, one run.

    PYTHONPATH=. python benchmarks/cuda_path.py [-n 400] [--out FILE.json]

Routers over the same catalog, weights and exemplar memory: torch on the CPU (the reference),
torch on CUDA, ONNX Runtime as shipped (``encoder.backend: onnx``, ``device: auto``: CUDA only
where onnxruntime has its CUDA provider) and, where it has one, ONNX Runtime on CUDA. Each
routes the first n v2 dev requests one at a time, in turn (round robin, so that load hits all
alike), after 20 to warm up. The exemplar memory is embedded once (on CUDA) and shared by all
through its cache, so the comparison is of the request path. Prints each one's device and
p50 / p90 / p99 latency, and against the reference how many answers name the same tools in the
same order and the largest score difference (scores are reported to 4 decimals), and the
time spent in the model's forward passes. Exits 2 where CUDA is not available (nothing to
compare); test/test_cuda_path.py runs the same comparison where it is.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def routers(threads: int) -> dict[str, Any]:
    """name -> Router: the reference first (each builds its own index over one catalog)."""
    import onnxruntime as ort

    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    def make(**encoder: Any) -> Router:
        overrides = {'chroma_ephemeral': True, 'encoder.threads': threads,
                     'encoder.pass_threads': threads}
        overrides.update({f'encoder.{k}' if k != 'device' else k: v
                          for k, v in encoder.items()})
        return Router(load_router_config(overrides=overrides))

    cuda = make(backend='torch', device='cuda')  # first: it embeds the exemplar memory fast
    out = {'torch cpu': make(backend='torch', device='cpu'), 'torch cuda': cuda,
           'onnx auto (shipped)': make()}
    if 'CUDAExecutionProvider' in ort.get_available_providers():
        out['onnx cuda'] = make(device='cuda')
    return out


def timed(router: Any) -> list[float]:
    """A one-item list that adds up the milliseconds spent in the model's forward passes."""
    encoder = getattr(router.encoder, 'inner', router.encoder)  # below the micro-batching
    spent = [0.0]
    encode = encoder.encode

    def counted(texts: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return encode(texts)
        finally:
            spent[0] += (time.perf_counter() - t0) * 1000.0

    encoder.encode = counted
    return spent


def compare(results: dict[str, list[Any]], reference: str) -> dict[str, dict[str, Any]]:
    """Same tools in the same order, and the largest score difference, against ``reference``."""
    ref = results[reference]
    out: dict[str, dict[str, Any]] = {}
    for name, got in results.items():
        same = sum(a.tools == b.tools for a, b in zip(ref, got))
        diff = max((abs(x - y) for a, b in zip(ref, got) if a.tools == b.tools
                    for x, y in zip(a.scores, b.scores)), default=0.0)
        changed = [(a.text, a.tools, b.tools) for a, b in zip(ref, got) if a.tools != b.tools]
        out[name] = {'same_tools': same, 'of': len(ref), 'max_score_diff': round(diff, 6),
                     'changed': changed[:10]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('-n', type=int, default=400)
    ap.add_argument('--threads', type=int, default=2, help='encoder threads (the shipped 2)')
    ap.add_argument('--out', default='')
    args = ap.parse_args()
    import torch

    from tool_router.common.stats import percentiles

    if not torch.cuda.is_available():
        print('CUDA is not available here: nothing to compare', file=sys.stderr)
        return 2
    lines = (ROOT / 'benchmarks/data/v2/dev.jsonl').read_text(encoding='utf-8').splitlines()
    texts = [json.loads(line)['request'] for line in lines[:args.n]]
    start = time.perf_counter()
    built = routers(args.threads)
    print(f'built {len(built)} routers in {time.perf_counter() - start:.1f} s')
    for router in built.values():
        for text in texts[:20]:
            router.route(text)
    results: dict[str, list[Any]] = {name: [] for name in built}
    times: dict[str, list[float]] = {name: [] for name in built}
    in_model: dict[str, list[float]] = {name: [] for name in built}
    spent = {name: timed(router) for name, router in built.items()}
    order = list(built)
    for k, text in enumerate(texts):
        for name in order[k % len(order):] + order[:k % len(order)]:
            before = spent[name][0]
            t0 = time.perf_counter()
            results[name].append(built[name].route(text))
            times[name].append((time.perf_counter() - t0) * 1000.0)
            in_model[name].append(spent[name][0] - before)
    agreement = compare(results, 'torch cpu')
    report: dict[str, Any] = {'n': len(texts), 'gpu': torch.cuda.get_device_name(0),
                              'torch': torch.__version__, 'threads': args.threads, 'routers': {}}
    for name, router in built.items():
        q = percentiles(times[name], (50, 90, 99))
        model_p50 = percentiles(in_model[name], (50,))['p50']
        row = {'device': router.health()['device'], **{k: round(v, 2) for k, v in q.items()},
               'model_p50': round(model_p50, 2), **agreement[name]}
        report['routers'][name] = row
        print(f'{name:20s} on {row["device"]:5s} p50 {q["p50"]:6.2f} ms  p90 {q["p90"]:6.2f} ms  '
              f'p99 {q["p99"]:6.2f} ms  (forward passes p50 {model_p50:5.2f} ms)  same tools as '
              f'torch cpu {row["same_tools"]}/{row["of"]} (max score diff '
              f'{row["max_score_diff"]:.2e}, scores to 4 decimals)')
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + '\n', encoding='utf-8')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
