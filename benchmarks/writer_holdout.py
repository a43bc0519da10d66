"""Writer holdout: does an encoder recipe transfer to writers it never saw? Dev only.

The encoder is fine-tuned on the v2 dev minus the requests of the held-out writers
(default w14 and w15, the newest: 460 dev requests), lcr is fitted on the same requests
(``encoder_cv.route_fold``, as ``fit lcr`` does), and the held-out writers' dev requests are
routed. That is the condition of the test split and of the outside sets (wording from
writers the model never saw); random folds put every writer in training. Nothing here
reads a test split.

    python benchmarks/writer_holdout.py --arms base,e3 --work /tmp/holdout
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / 'benchmarks')]

from encoder_cv import holdout_report, record, route_fold  # noqa: E402
from tool_router.common.catalog import load_catalog  # noqa: E402
from tool_router.routing.embeddings import (  # noqa: E402
    DEFAULT_MODEL,
    SentenceTransformerEncoder,
    apply_patch,
    resolve_model,
    save_patch,
)
from tool_router.evaluation.dataset import load_jsonl  # noqa: E402
from tool_router.evaluation.fitting.encoder import Recipe, TopLayers, fine_tune  # noqa: E402
from tool_router.common.paths import config_path  # noqa: E402
from tool_router.routing.policies.lcr import load_scope_phrases  # noqa: E402

ARMS = {
    'base': Recipe(),  # the shipped recipe
    'e3': Recipe(epochs=3),
    'cms02': Recipe(clause_min_similarity=0.2),
}


def split_by_writer(examples, held):  # type: ignore[no-untyped-def]
    """(requests of the other writers, requests of the ``held`` writers); "-" = no writer."""
    def writer(ex):  # type: ignore[no-untyped-def]
        return (ex.model_extra or {}).get('writer', '-')

    return ([ex for ex in examples if writer(ex) not in held],
            [ex for ex in examples if writer(ex) in held])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dataset', default=str(ROOT / 'benchmarks/data/v2/dev.jsonl'))
    ap.add_argument('--arms', default='base')
    ap.add_argument('--held', default='w14,w15', help='writers left out of training')
    ap.add_argument('--work', default='/tmp/writer_holdout')
    args = ap.parse_args()
    assert 'test' not in Path(args.dataset).name
    import torch

    torch.set_num_threads(1)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    held = set(args.held.split(','))
    catalog = load_catalog(config_path('catalog.yaml'))
    examples = load_jsonl(args.dataset, catalog)
    train, test = split_by_writer(examples, held)
    base = resolve_model(DEFAULT_MODEL)
    scope = load_scope_phrases()
    for arm in args.arms.split(','):
        t0 = time.perf_counter()
        recipe = ARMS[arm]
        patch = work / f'{arm}.safetensors'
        if not patch.exists():
            tensors = fine_tune(Path(base), train, catalog, scope, recipe,
                                log=lambda s: print('   ', s, flush=True),
                                top=TopLayers(Path(base), recipe.layers))
            save_patch(tensors, patch, {'held_out_writers': args.held})
        encoder = SentenceTransformerEncoder(apply_patch(base, patch), 'cpu', backend='torch',
                                             threads=1)
        got = route_fold(encoder, catalog, train, test, {}, scope)
        res = holdout_report(test, got)
        res.update(arm=arm, held=args.held, n=len(test), n_train=len(train),
                   recipe=recipe.as_dict(), seconds=round(time.perf_counter() - t0))
        (work / f'{arm}.preds.json').write_text(
            json.dumps({ex.id: sorted(p) for ex, p in zip(test, got)}))
        record(work, res)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
