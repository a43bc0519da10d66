"""Cross-fitted lcr on a writer holdout: are lcr's weights and thresholds better fitted on
out-of-fold similarities? Dev only.

Training = the v2 dev minus the held-out writers (default w14, w15); the encoder is fine-tuned
on it ("full" patch) and, for cross-fitting, once per writer-grouped fold on the training
requests outside that fold (``--folds`` patches). Arms, both routed with the full patch's
encoder on the held-out writers' dev requests:

* ``plain``: lcr fitted on the training requests' similarities under the full encoder (as
  ``fit lcr`` does today: in-sample for the encoder);
* ``xfit``: lcr fitted on each training request's similarities under the fold encoder that
  never saw it (:class:`tool_router.evaluation.fitting.lcr.CrossFit`).

Patches can be trained in parallel processes first (``--train full,0,1`` and ``--train 2,3``),
then ``--route`` scores both arms.

    python benchmarks/crossfit_holdout.py --recipe base --train full,0,1 --work /tmp/xfit
    python benchmarks/crossfit_holdout.py --recipe base --route --work /tmp/xfit
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / 'benchmarks')]

from encoder_cv import fold_extractor, holdout_report, record, route_fold  # noqa: E402
from writer_holdout import ARMS, split_by_writer  # noqa: E402
from tool_router.common.catalog import load_catalog  # noqa: E402
from tool_router.routing.embeddings import (  # noqa: E402
    DEFAULT_MODEL,
    SentenceTransformerEncoder,
    apply_patch,
    resolve_model,
    save_patch,
)
from tool_router.evaluation.dataset import load_jsonl  # noqa: E402
from tool_router.evaluation.fitting.encoder import TopLayers, fine_tune, writer_folds  # noqa: E402
from tool_router.evaluation.fitting.lcr import CrossFit  # noqa: E402
from tool_router.common.paths import config_path  # noqa: E402
from tool_router.routing.policies.lcr import load_scope_phrases  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dataset', default=str(ROOT / 'benchmarks/data/v2/dev.jsonl'))
    ap.add_argument('--recipe', default='base', choices=sorted(ARMS))
    ap.add_argument('--held', default='w14,w15', help='writers left out of training')
    ap.add_argument('--folds', type=int, default=4)
    ap.add_argument('--train', default='', help='patches to train: full and/or fold numbers')
    ap.add_argument('--route', action='store_true', help='score the plain and xfit arms')
    ap.add_argument('--work', default='/tmp/crossfit_holdout')
    ap.add_argument('--arms', default='plain,xfit')
    ap.add_argument('--oos-weight', type=float, default=None,
                    help="the objective's out-of-scope empty weight for the xfit arm "
                         "(default: objective.py's)")
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
    fold = writer_folds(train, args.folds)
    base = resolve_model(DEFAULT_MODEL)
    scope = load_scope_phrases()
    recipe = ARMS[args.recipe]

    def patch(name: str) -> Path:
        return work / f'{args.recipe}-{name}.safetensors'

    top = None
    for name in [n for n in args.train.split(',') if n]:
        if patch(name).exists():
            continue
        t0 = time.perf_counter()
        rows = train if name == 'full' else [ex for ex in train if fold[ex.id] != int(name)]
        top = top or TopLayers(Path(base), recipe.layers)
        tensors = fine_tune(Path(base), rows, catalog, scope, recipe,
                            log=lambda s: print('   ', s, flush=True), top=top)
        save_patch(tensors, patch(name), {'held_out_writers': args.held, 'fold': name})
        print(f'patch {name}: {len(rows)} requests, {time.perf_counter() - t0:.0f} s', flush=True)
    if not args.route:
        return 0

    def encoder(name: str) -> SentenceTransformerEncoder:
        return SentenceTransformerEncoder(apply_patch(base, patch(name)), 'cpu',
                                          backend='torch', threads=1)

    full = encoder('full')
    weight = {} if args.oos_weight is None else {'oos_weight': args.oos_weight}
    common = dict(held=args.held, n=len(test), n_train=len(train), recipe=args.recipe,
                  folds=args.folds, oos_weight=args.oos_weight)
    for arm in args.arms.split(','):
        t0 = time.perf_counter()
        if arm == 'plain':
            got = route_fold(full, catalog, train, test, {}, scope)
        else:
            cf = CrossFit(fold, [fold_extractor(encoder(str(k)), catalog, {}, scope)
                                 for k in range(args.folds)])
            got = route_fold(full, catalog, train, test, {}, scope, cross_fit=cf, **weight)
        res = holdout_report(test, got)
        res.update(arm=arm, seconds=round(time.perf_counter() - t0), **common)
        tag = '' if args.oos_weight is None else f'-w{args.oos_weight}'
        (work / f'{args.recipe}-{arm}{tag}.preds.json').write_text(
            json.dumps({ex.id: sorted(p) for ex, p in zip(test, got)}))
        record(work, res)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
