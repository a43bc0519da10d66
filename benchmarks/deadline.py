"""How far past ``hybrid.deadline_ms`` a request runs when the LLM endpoint is slow.

The tests check *what happened* at a deadline (a timeout was taken, the late
answer was ignored, the call got at most what was left of the deadline); this
script measures the *timing*, which depends on the machine's load and so does
not belong in a test. A real HTTP server on 127.0.0.1 (test/llm_server.py)
answers every request after ``--delay-s``; the router runs `hybrid` with the
gate always open and ``deadline_ms``; the script prints the median, p95 and max
of the wall-clock time per request and of the overshoot past the deadline.

    python benchmarks/deadline.py [-n 30] [--deadline-ms 400] [--delay-s 3] [--encoder hashing]
        [--shape slow|huge|huge-unsized|nested|drip|utf16]

``--shape`` picks what the endpoint returns (issue 13): ``slow`` answers after
``--delay-s``; ``huge`` answers at once with 100,000 names (~1.5 MB);
``huge-unsized`` the same without a Content-Length; ``nested`` 200,000 ``[``;
``drip`` a valid reply one byte every 50 ms; ``utf16`` a valid reply in UTF-16.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / 'test')]
os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')

TEXT = 'take off, fly to the water tower, take a thermal picture and land when the battery is low'


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('-n', type=int, default=30, help='requests to time (default 30)')
    ap.add_argument('--deadline-ms', type=float, default=400.0, help='hybrid.deadline_ms')
    ap.add_argument('--delay-s', type=float, default=3.0, help='server delay before answering')
    ap.add_argument('--shape', default='slow',
                    choices=('slow', 'huge', 'huge-unsized', 'nested', 'drip', 'utf16'))
    ap.add_argument('--encoder', choices=('minilm', 'hashing'), default='minilm',
                    help='MiniLM (what the router ships) or the tests\' hashing encoder')
    args = ap.parse_args(argv)
    if not 0 < args.n < 100:
        ap.error('-n must be 1..99 (the circuit breaker opens after 100 failures)')

    import numpy as np
    import torch

    from llm_server import ModelServer, openai_reply
    from tool_router.common.catalog import load_catalog
    from tool_router.routing.config import RouterConfig
    from tool_router.routing.index import CatalogIndex
    from tool_router.routing.llm.client import LLMClient
    from tool_router.routing.llm.settings import HybridParams, LLMParams
    from tool_router.common.paths import config_path
    from tool_router.routing.router import Router
    from tool_router.common.stats import percentile

    torch.set_num_threads(1)
    logging.getLogger('tool_router').setLevel(logging.ERROR)  # one warning per timeout
    catalog = load_catalog(config_path('catalog.yaml'))
    if args.encoder == 'hashing':
        from fakes import HashingEncoder
        encoder = HashingEncoder()
    else:
        from tool_router.routing.embeddings import SentenceTransformerEncoder
        encoder = SentenceTransformerEncoder('all-MiniLM-L6-v2', 'cpu')
    index = CatalogIndex.ephemeral(catalog, encoder)
    server = ModelServer()
    valid = json.dumps(openai_reply('{"tools": ["land"]}'))
    huge = json.dumps(openai_reply(json.dumps(
        {'tools': [f'tool_{i}' for i in range(100_000)] + ['land']}))).encode()
    server.default = {
        'slow': {'content': '{"tools": ["land"]}', 'delay': args.delay_s},
        'huge': {'raw': huge},
        'huge-unsized': {'raw': huge, 'no_length': True},
        'nested': {'raw': b'[' * 200_000},
        'drip': {'raw': valid.encode(), 'drip': 0.05},
        'utf16': {'raw': valid.encode('utf-16')},
    }[args.shape]
    # n < 100 timeouts: the circuit never opens
    llm = LLMParams(url=server.url, allow_remote=True, breaker_failures=100)
    hybrid = HybridParams(gate='always', mode='full', deadline_ms=args.deadline_ms)
    router = Router(RouterConfig(chroma_ephemeral=True, llm=llm, hybrid=hybrid), index=index)
    router.route('warm up', 'cdbv3')
    # Where the time goes (measurement only): when the LLM call was entered and left.
    marks: dict[str, float] = {}
    chat = LLMClient.chat

    def timed_chat(self: Any, *a: Any, **k: Any) -> Any:
        marks['call'] = time.perf_counter()
        try:
            return chat(self, *a, **k)
        finally:
            marks['back'] = time.perf_counter()

    LLMClient.chat = timed_chat  # type: ignore[method-assign]
    elapsed, timeouts, reasons = [], 0, set()
    before, wait_over, after = [], [], []
    try:
        for _ in range(args.n):
            marks.clear()
            start = time.perf_counter()
            result = router.route(TEXT, 'hybrid')
            end = time.perf_counter()
            elapsed.append((end - start) * 1000.0)
            timeouts += 'timeout' in result.fallback_reason
            reasons.add(result.fallback_reason.split(':')[0][:60])
            if 'call' in marks:
                before.append((marks['call'] - start) * 1000.0)
                wait_over.append((marks['back'] - start) * 1000.0 - args.deadline_ms)
                after.append((end - marks['back']) * 1000.0)
    finally:
        LLMClient.chat = chat  # type: ignore[method-assign]
        server.close()
    ms = np.asarray(elapsed)
    over = ms - args.deadline_ms

    def stats(a: np.ndarray) -> dict[str, float]:
        return {k: round(float(v), 1) for k, v in
                (('median', percentile(a, 50)), ('p95', percentile(a, 95)), ('max', a.max()))}
    print(json.dumps({'n': args.n, 'shape': args.shape, 'deadline_ms': args.deadline_ms,
                      'encoder': args.encoder, 'reasons': sorted(reasons),
                      'timeouts': timeouts, 'elapsed_ms': stats(ms),
                      'overshoot_ms': stats(over),
                      # before the call (local route), the call's return past the deadline,
                      # after it (merge / degrade / validation)
                      'phases_ms': {'before_call': stats(np.asarray(before or [0.0])),
                                    'call_past_deadline': stats(np.asarray(wait_over or [0.0])),
                                    'after_call': stats(np.asarray(after or [0.0]))},
                      'loadavg': round(os.getloadavg()[0], 1)}, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
