"""``tool-router fit lcr | encoder | gate | questions | cdb``: the fitting commands (dev data)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tool_router.cli.common import add_config_args, config_from_args, print_json


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _out(args: argparse.Namespace, shipped: str, then: str) -> Path:
    """Where a fit writes: --out FILE, or with --force the installed config/``shipped``.

    Neither given is an error: replacing a shipped file is a decision, never a default.
    """
    from tool_router.common.errors import ConfigError
    from tool_router.common.paths import config_path

    if args.out:
        return Path(args.out)
    if args.force:
        return config_path(shipped)
    raise ConfigError('no --out given', hint=f'write it with --out FILE ({then}), or give '
                      f'--force to replace the installed {config_path(shipped)}')


def cmd_fit_lcr(args: argparse.Namespace) -> int:
    """Fit the lcr scorer; --out or --force decides where the model goes."""
    from tool_router.evaluation.fitting.lcr import fit
    from tool_router.routing.router import Router

    out = _out(args, 'lcr_model.json', 'then --set lcr.model_path=FILE')
    # cdbv3 as the default policy: the scorer being fitted may not exist yet.
    router = Router(config_from_args(args, policy='cdbv3'))
    fit(Path(args.dataset), router, out, log=_log, augment_per_request=args.augment,
        cross_fit=[Path(p) for p in args.cross_fit],
        **({} if args.oos_weight is None else {'oos_weight': args.oos_weight}))
    return 0


def cmd_fit_encoder(args: argparse.Namespace) -> int:
    """Fine-tune the encoder's top layers; --out or --force decides where the patch goes."""
    from tool_router.common.catalog import load_catalog
    from tool_router.routing.embeddings import PATCH_FILE
    from tool_router.common.errors import ConfigError
    from tool_router.evaluation.fitting.encoder import fit

    out = _out(args, PATCH_FILE, 'then refit lcr on top: `tool-router fit lcr`')
    config = config_from_args(args, policy='cdbv3')
    fold = None
    if args.fold is not None:
        if not args.out:
            raise ConfigError('a fold patch is not the shipped encoder',
                              hint='write it with --out FILE (for `fit lcr --cross-fit`)')
        fold = (args.fold, args.folds)
    fit(Path(args.dataset), load_catalog(config.resolved_catalog()), out, log=_log, fold=fold)
    return 0


def cmd_fit_gate(args: argparse.Namespace) -> int:
    """Fit the hybrid gate and print the thresholds."""
    from tool_router.evaluation.fitting.gate import fit_gate, gate_rows
    from tool_router.evaluation.fitting.lcr import progress_bar
    from tool_router.routing.router import Router

    router = Router(config_from_args(args))
    name = args.policy or router.config.policy
    rows = gate_rows(router, Path(args.dataset), name, progress=progress_bar)
    print_json(
        {'policy': name, 'n': len(rows), 'target_rate': args.target_rate,
         **fit_gate(rows, args.target_rate)}
    )
    return 0


def cmd_fit_questions(args: argparse.Namespace) -> int:
    """Fit the question probe on lcr's request vectors; --out or --force decides where."""
    import numpy as np

    from tool_router.evaluation.fitting.lcr import progress_bar
    from tool_router.evaluation.fitting.questions import fit_probe, probe_rows
    from tool_router.routing.questions import QUESTION, ORDER, clause_moods
    from tool_router.routing.router import Router

    out = _out(args, 'question_probe.json', 'then --set question_probe=FILE')
    router = Router(config_from_args(args, policy='lcr', question_probe='off'))
    rows = probe_rows(Path(args.dataset), Path(args.questions), router.catalog)
    lcr = router.policy('lcr')
    vectors = np.array([lcr.route(row.request, 8).request_vector
                        for row in progress_bar(rows, 'embedding')])

    def missed(row: object) -> bool:  # the rules read no clause as a question or an order
        moods = {cm.mood.kind for cm in clause_moods(getattr(row, 'request'))}
        return QUESTION not in moods and ORDER not in moods

    probe = fit_probe(rows, vectors, getattr(router.encoder, 'weights_id', ''), missed, _log)
    probe.save(out)
    _log(f'wrote {out}')
    router.close()
    return 0


def cmd_fit_cdb(args: argparse.Namespace) -> int:
    """Grid-search the CDB constants and print the best points."""
    from tool_router.evaluation.fitting.cdb import GRIDS, tune
    from tool_router.evaluation.fitting.lcr import progress_bar
    from tool_router.routing.router import Router

    policies = args.policies.split(',') if args.policies else list(GRIDS)
    unknown = [p for p in policies if p not in GRIDS]
    if unknown:
        from tool_router.common.errors import RequestError

        raise RequestError(f'no tuning grid for {unknown}', hint=f'one of {sorted(GRIDS)}')
    router = Router(config_from_args(args, policy='cdbv3'))
    best = tune(router, Path(args.dataset), policies, progress=progress_bar)
    for policy, rows in best.items():
        for params, macro, oos in rows:
            print(f'{policy} {json.dumps(params)}: dev macro composite {macro:.4f}, '
                  f'out-of-scope empty {oos:.3f}')
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``fit lcr|encoder|gate|cdb`` to the ``tool-router`` command line."""
    fit = sub.add_parser(
        'fit', help='fit or tune a policy on development data (never a test split)'
    )
    fsub = fit.add_subparsers(dest='fit_command', required=True, metavar='WHAT')

    for name, help_text, shipped, handler in (
        ('lcr', "fit the default policy's scorer and thresholds", 'lcr_model.json', cmd_fit_lcr),
        ('encoder', "fine-tune the sentence encoder's top layer (docs/ENCODER.md)",
         'encoder_patch.safetensors', cmd_fit_encoder),
    ):
        p = fsub.add_parser(name, help=help_text)
        p.add_argument('--dataset', required=True, help='annotated JSONL (the dev split)')
        out = p.add_mutually_exclusive_group()
        out.add_argument('--out', help='file to write')
        out.add_argument('--force', action='store_true',
                         help=f'replace the installed config/{shipped}')
        if name == 'lcr':
            p.add_argument('--augment', type=int, default=None, metavar='N',
                           help='noisy training-only variants per request (0 = none; default: '
                                'AUGMENT_PER_REQUEST of tool_router/evaluation/fitting/lcr.py, 2)')
            p.add_argument('--cross-fit', nargs='+', default=[], metavar='PATCH',
                           help='fold patches of `fit encoder --fold K --folds N` on this '
                                'dataset, one per fold: fit on out-of-fold similarities '
                                '(docs/ENCODER.md)')
            p.add_argument('--oos-weight', type=float, default=None, metavar='W',
                           help='weight of the out-of-scope empty rate in the objective the '
                                'thresholds are chosen by (default: OUT_OF_SCOPE_EMPTY_WEIGHT '
                                'of fitting/objective.py, 0.25; higher: more abstentions, more '
                                'in-scope empties; docs/CONSTANTS.md)')
        else:
            p.add_argument('--fold', type=int, default=None, metavar='K',
                           help='train without writer fold K (a patch for `fit lcr --cross-fit`)')
            p.add_argument('--folds', type=int, default=4, metavar='N',
                           help='number of writer folds (with --fold; default 4)')
        add_config_args(p)
        p.set_defaults(handler=handler)

    p = fsub.add_parser('gate', help="fit the hybrid policy's gate (prints the thresholds)")
    p.add_argument('--dataset', required=True, help='annotated JSONL (the dev split)')
    p.add_argument('--target-rate', type=float, default=0.3,
                   help='largest share of requests sent to the LLM')
    p.add_argument('--policy', default='', help='local policy (default: the configured one)')
    add_config_args(p)
    p.set_defaults(handler=cmd_fit_gate)

    p = fsub.add_parser('questions', help="fit the question probe on lcr's request vectors "
                        '(routing/question_probe.py)')
    p.add_argument('--dataset', default='benchmarks/data/v2/dev.jsonl',
                   help='annotated JSONL (the dev split)')
    p.add_argument('--questions', default='benchmarks/data/questions/dev_questions.jsonl',
                   help='the dev question file (state_question / polite_order rows)')
    out = p.add_mutually_exclusive_group()
    out.add_argument('--out', help='file to write')
    out.add_argument('--force', action='store_true',
                     help='replace the installed config/question_probe.json')
    add_config_args(p)
    p.set_defaults(handler=cmd_fit_questions)

    p = fsub.add_parser('cdb', help='grid-search the CDB constants (prints the best three)')
    p.add_argument('--dataset', required=True, help='annotated JSONL (the dev split)')
    p.add_argument('--policies', default='', help='comma-separated, default cdbv1,cdbv2,cdbv3')
    add_config_args(p)
    p.set_defaults(handler=cmd_fit_cdb)
