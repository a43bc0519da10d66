"""What the question probe costs a route: the shipped router with and without it, one run.

    PYTHONPATH=. python benchmarks/question_probe_latency.py [-n 400] [--out FILE.json]

Two routers over one in-memory index (the shipped configuration; ``question_probe`` '' and
'off'), the first n v2 dev requests, each routed by both in alternating order (so load hits
both alike). Prints p50 / p90 / p99 of each and the ratio of the medians, and how many
requests the probe was asked about (it reads lcr's own request vector: no forward pass of its
own). Compare the two columns of one run, not runs on different machines.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('-n', type=int, default=400)
    ap.add_argument('--out', default='')
    args = ap.parse_args()
    from tool_router.common.stats import percentiles
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    lines = (ROOT / 'benchmarks/data/v2/dev.jsonl').read_text(encoding='utf-8').splitlines()
    texts = [json.loads(line)['request'] for line in lines[:args.n]]
    on = Router(load_router_config(overrides={'chroma_ephemeral': True}))
    off = Router(load_router_config(overrides={'chroma_ephemeral': True,
                                               'question_probe': 'off'}), index=on.index)
    assert on._question_probe(on.config) is not None, 'the shipped probe is not active'
    for t in texts[:20]:  # warm both
        on.route(t), off.route(t)
    times: dict[str, list[float]] = {'probe on': [], 'probe off': []}
    probe_drops = 0
    for k, text in enumerate(texts):
        pair = [('probe on', on), ('probe off', off)]
        for name, router in (pair if k % 2 == 0 else pair[::-1]):
            start = time.perf_counter()
            result = router.route(text)
            times[name].append((time.perf_counter() - start) * 1000.0)
            if name == 'probe on':
                probe_drops += any('question probe' in q.reason for q in result.questions)
    out: dict[str, object] = {'n': len(texts), 'probe_drops': probe_drops}
    for name, values in times.items():
        q = percentiles(values, (50, 90, 99))
        out[name] = {k: round(v, 2) for k, v in q.items()}
        print(f'{name:10s} n={len(values)}  p50 {q["p50"]:6.2f} ms  p90 {q["p90"]:6.2f} ms  '
              f'p99 {q["p99"]:6.2f} ms')
    ratio = out['probe on']['p50'] / out['probe off']['p50']  # type: ignore[index]
    out['p50_ratio_on_off'] = round(ratio, 3)
    print(f'p50 ratio on/off {ratio:.3f}; requests the probe answered as questions: '
          f'{probe_drops} of {len(texts)}')
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + '\n', encoding='utf-8')
    on.close()
    off.close()


if __name__ == '__main__':
    main()
