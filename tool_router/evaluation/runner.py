"""Collect evaluation records: route every request with every policy (in-process or live).

Collecting is separate from analysing: this module produces
:class:`~tool_router.evaluation.metrics.RequestRecord` lists; ``report`` and
``plots`` read them.
"""
from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

from tool_router.common.errors import DatasetError, RequestError, ToolRouterError
from tool_router.evaluation.bag import BagContents, Selection, is_bag, read_bag
from tool_router.evaluation.dataset import ALL_LEVELS, Example, load_jsonl
from tool_router.evaluation.metrics import LLMFlags, RequestRecord, make_record
from tool_router.common.explanation import Explanation

DEFAULT = 'default'


@dataclass
class Dataset:
    """Annotated requests from one or more files; ``recorded`` holds a bag's recorded session."""

    examples: list[Example]
    sources: list[str]
    recorded: BagContents | None = None

    def summary(self) -> dict[str, Any]:
        """Counts of requests per level and style."""
        levels = Counter(ex.level for ex in self.examples)
        styles = Counter(str(getattr(ex, 'style', '') or '') for ex in self.examples)
        styles.pop('', None)
        return {'n': len(self.examples), 'levels': {lv: levels.get(lv, 0) for lv in ALL_LEVELS},
                'styles': dict(sorted(styles.items())), 'sources': self.sources}


def load_dataset(paths: Sequence[str | Path], catalog: Any, replay: bool = False) -> Dataset:
    """Load JSONL files and/or bags; a bag with selections is a recorded session, unless replay."""
    examples: list[Example] = []
    recorded: BagContents | None = None
    seen: dict[str, str] = {}
    for path in paths:
        if is_bag(path):
            contents = read_bag(path, catalog)
            if contents.selections and not replay:
                if recorded is not None or examples or len(paths) > 1:
                    raise DatasetError('a recorded session bag (with selections) must be the only '
                                       '--dataset', where=str(path))
                recorded = contents
            new = _unique_requests(contents)
        elif Path(path).is_dir():
            raise DatasetError('directory is not a rosbag2 bag (no metadata.yaml)',
                               where=str(path))
        else:
            new = load_jsonl(path, catalog)
        for ex in new:
            if ex.id in seen:
                raise DatasetError(f'duplicate id {ex.id!r} (also in {seen[ex.id]})',
                                   where=str(path))
            seen[ex.id] = str(path)
        examples += new
    return Dataset(examples, [str(p) for p in paths], recorded)


def _unique_requests(contents: BagContents) -> list[Example]:
    """One example per distinct request text (a session may route a text several times)."""
    out: dict[str, Example] = {}
    for r in contents.requests:
        out.setdefault(r.example.request, r.example)
    return list(out.values())


def resolve_policies(names: Sequence[str], default_policy: str,
                     known: Iterable[str]) -> list[tuple[str, bool]]:
    """(name, is_default) per requested policy, ``default`` resolved; fail on unknown names."""
    known = set(known)
    out: dict[str, bool] = {}
    for name in (n.strip() for n in names):
        if not name:
            continue
        real = default_policy if name == DEFAULT else name
        if real not in known:
            raise RequestError(f'unknown policy {name!r}',
                               hint='known: ' + ', '.join(sorted(known)))
        out[real] = out.get(real, False) or real == default_policy
    if not out:
        raise RequestError('no policy given', hint='e.g. --policies cdbv1,cdbv2,cdbv3')
    return list(out.items())


# -- backends ------------------------------------------------------------------------
@dataclass
class Routed:
    """One answer, whichever way it was obtained."""

    tools: list[str]
    scores: list[float] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    fragments: list[str] = field(default_factory=list)
    latency_ms: float | None = None
    llm: LLMFlags | None = None
    error: str = ''


class Backend(Protocol):
    """Routes one dataset example with one policy (in-process or over ROS)."""

    def route(self, example: Example, policy: str) -> Routed:
        """Route ``example`` with ``policy``; errors become refused answers."""


class InProcessBackend:
    """Routes with a :class:`~tool_router.routing.router.Router` in this process."""

    def __init__(self, router: Any) -> None:
        self.router = router

    def route(self, example: Example, policy: str) -> Routed:
        """Route through the in-process router; a RequestError is a refused answer."""
        try:
            result = self.router.route(example.request, policy)
        except RequestError as exc:
            return Routed(tools=[], error=str(exc))
        d = result.decision
        return Routed(tools=list(result.tools), scores=[float(s) for s in result.scores],
                      dropped=list(result.dropped), fragments=list(d.fragments) if d else [],
                      latency_ms=result.latency_ms,
                      llm=LLMFlags.from_facts(d.llm) if d else None)


def warn_about(request_id: str) -> Any:
    """A warning printer for one request's explanation problems (to stderr)."""
    def say(message: str) -> None:
        print(f'tool-router: warning: request {request_id}: {message}', file=sys.stderr)
    return say


# -- running --------------------------------------------------------------------------
def _style(example: Example) -> str:
    return str(getattr(example, 'style', '') or '')


def record_of(example: Example, policy: str, repeat: int, routed: Routed) -> RequestRecord:
    """Score one routed answer."""
    return make_record(id=example.id, level=example.level, request=example.request,
                       truth=list(example.tools), policy=policy, tools=routed.tools,
                       dropped=routed.dropped, style=_style(example), repeat=repeat,
                       scores=routed.scores, fragments=routed.fragments,
                       latency_ms=routed.latency_ms, llm=routed.llm, error=routed.error)


def run(examples: Sequence[Example], policies: Sequence[str], backend: Backend, repeats: int = 1,
        progress: bool = True) -> list[RequestRecord]:
    """Route every example with every policy ``repeats`` times; records in that order."""
    from tqdm import tqdm
    total = len(examples) * len(policies) * repeats
    bar = tqdm(total=total, desc='routing', unit='req', file=sys.stderr,
               disable=not progress, mininterval=1.0)
    records = []
    try:
        for policy in policies:
            bar.set_postfix_str(policy)
            for repeat in range(repeats):
                for ex in examples:
                    try:
                        routed = backend.route(ex, policy)
                    except ToolRouterError as exc:
                        if 'no answer' not in str(exc):
                            raise
                        routed = Routed(tools=[], error=str(exc))
                    records.append(record_of(ex, policy, repeat, routed))
                    bar.update()
    finally:
        bar.close()
    return records


def _ids(ids: Iterable[str], limit: int = 5) -> str:
    ids = list(ids)
    return ', '.join(map(repr, ids[:limit])) + (f' and {len(ids) - limit} more'
                                                if len(ids) > limit else '')


def session_warnings(contents: BagContents) -> list[str]:
    """What :func:`score_recorded` cannot use from a recorded session, counted and named.

    Selections whose request is not in the bag are not scored; when a request
    id has several selections only the first is scored; requests sharing an
    id all take that id's selection; requests without a selection are scored
    as empty answers. Nothing is dropped without one of these lines.
    """
    requested = Counter(r.example.id for r in contents.requests)
    selected = Counter(s.request_id for s in contents.selections)
    out = []
    orphans = [i for i in selected if i not in requested]
    if orphans:
        n = sum(selected[i] for i in orphans)
        out.append(f'{n} selection(s) without their request message in the bag, not scored: '
                   f'{_ids(orphans)}')
    repeated = [i for i, n in selected.items() if n > 1]
    if repeated:
        n = sum(selected[i] - 1 for i in repeated)
        out.append(f'{n} extra selection(s) for an already answered request id, not scored '
                   f'(the first one is): {_ids(repeated)}')
    shared = [i for i, n in requested.items() if n > 1]
    if shared:
        n = sum(requested[i] - 1 for i in shared)
        out.append(f'{n} request message(s) repeat the request_id of an earlier one (each is '
                   f'scored with that id\'s selection): {_ids(shared)}')
    unanswered = [i for i in requested if i not in selected]
    if unanswered:
        out.append(f'{len(unanswered)} request(s) without a selection, scored as empty answers '
                   f'(the node publishes nothing for no tool): {_ids(unanswered)}')
    return out


def score_recorded(contents: BagContents) -> list[RequestRecord]:
    """Records of a recorded session: selections joined to requests by ``request_id``.

    A request without a selection is an empty answer. Its policy is the one
    the request named, else the single policy seen in the selections. The
    latency is the time between the request and its selection in the bag.
    What cannot be joined is counted by :func:`session_warnings`.
    """
    by_id: dict[str, Selection] = {}
    for recorded in contents.selections:
        by_id.setdefault(recorded.request_id, recorded)
    seen_policies = {s.policy for s in contents.selections if s.policy}
    fallback = seen_policies.pop() if len(seen_policies) == 1 else 'recorded'
    canonical: dict[str, str] = {}
    repeats: Counter[tuple[str, str]] = Counter()
    records = []
    for req in contents.requests:
        ex = req.example
        sel = by_id.get(ex.id)
        policy = (sel.policy if sel else '') or req.policy or fallback
        key = canonical.setdefault(ex.request, ex.id)
        repeat = repeats[(ex.request, policy)]
        repeats[(ex.request, policy)] += 1
        latency = (sel.timestamp - req.timestamp) / 1e6 if sel and sel.timestamp >= req.timestamp \
            else None
        why = sel.explanation if sel else Explanation()
        routed = Routed(tools=list(sel.tools) if sel else [], scores=sel.scores if sel else [],
                        dropped=list(why.dropped), fragments=list(why.fragments),
                        latency_ms=latency, llm=LLMFlags.from_facts(why.llm) if sel else None)
        records.append(record_of(ex.model_copy(update={'id': key}), policy, repeat, routed))
    return records
