"""How often ``hybrid`` asks the LLM, measured against a real HTTP endpoint on 127.0.0.1.

    python benchmarks/hybrid_gate.py --dataset benchmarks/data/v2/test.jsonl
    python benchmarks/hybrid_gate.py --dataset benchmarks/data/v2/dev.jsonl --limit 20   # smoke

Starts the scripted model server of the tests (``test/llm_server.py``: a real
``ThreadingHTTPServer`` on 127.0.0.1 speaking the OpenAI chat API; it answers every call
with no tool, so only the gate is measured here, not the LLM's quality) and routes every
request of the dataset through ``hybrid`` over the shipped local policy, once with the
shipped gate and once more with ``gate_on_abstain: true``. The call rate is the number of
HTTP requests the server received divided by the number of routed requests; the table
also says how many local abstentions (in scope / out of scope) were sent.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'test'))


def measure(dataset: Path, limit: int = 0) -> list[dict[str, Any]]:
    """One row per gate setting: calls, call rate, abstentions sent."""
    from llm_server import ModelServer
    from tool_router.routing.config import load_router_config
    from tool_router.evaluation.dataset import load_jsonl
    from tool_router.routing.router import Router

    base = load_router_config()
    examples = load_jsonl(dataset, None)
    examples = examples[:limit] if limit else examples
    server = ModelServer()
    rows = []
    try:
        llm = base.llm.model_copy(update={'url': server.url, 'allow_remote': True})
        for on_abstain in (False, True):
            hybrid = base.hybrid.model_copy(update={'gate_on_abstain': on_abstain})
            config = base.model_copy(
                update={'chroma_ephemeral': True, 'llm': llm, 'hybrid': hybrid}
            )
            before = len(server.requests)
            abstained = {'in scope': [0, 0], 'out of scope': [0, 0]}  # [abstentions, sent]
            with Router(config) as router:
                for ex in examples:
                    d = router.route(ex.request, 'hybrid').decision
                    facts = d.hybrid if d else None
                    if facts is None or not facts.gate.abstained:
                        continue
                    key = 'out of scope' if ex.level == 'out_of_scope' else 'in scope'
                    abstained[key][0] += 1
                    abstained[key][1] += int(bool(facts.llm_mode))  # the LLM was asked
            calls = len(server.requests) - before
            rows.append({
                'gate_on_abstain': on_abstain,
                'requests': len(examples),
                'llm_calls': calls,
                'call_rate': round(calls / max(1, len(examples)), 4),
                'abstentions_sent': {k: f'{v[1]} of {v[0]}' for k, v in abstained.items()},
            })
    finally:
        server.close()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dataset', default=str(ROOT / 'benchmarks/data/v2/test.jsonl'))
    ap.add_argument('--limit', type=int, default=0, help='first N requests only (smoke)')
    ap.add_argument('--out', default='', help='write the rows as JSON here too')
    args = ap.parse_args()
    rows = measure(Path(args.dataset), args.limit)
    text = json.dumps(rows, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + '\n', encoding='utf-8')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
