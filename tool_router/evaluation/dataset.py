"""Annotated request datasets (JSONL) and their validation and split.

One object per line::

    {"id": "a001", "level": "direct", "request": "land the drone", "tools": ["land"]}

Extra keys are allowed and kept. Rules (``ANNOTATION.md``): level sizes
direct=1, consequential=2, compound>=3, out_of_scope=0; tool lists unique and
inside the catalog (a tool list is a set: it is read in sorted order, and
``tool-router dataset check --fix`` rewrites unsorted lists); ids unique; no
duplicate request texts.
"""

from __future__ import annotations

import difflib
import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.catalog import Catalog
from tool_router.common.errors import DatasetError, one_line

LEVELS = ('direct', 'consequential', 'compound')
ALL_LEVELS = LEVELS + ('out_of_scope',)


class Example(BaseModel):
    """One annotated request."""

    model_config = ConfigDict(extra='allow', frozen=True)

    id: str = Field(min_length=1)
    level: str
    request: str = Field(min_length=1)
    tools: tuple[str, ...]


def _size_ok(level: str, n: int) -> bool:
    return {'direct': n == 1, 'consequential': n == 2, 'compound': n >= 3, 'out_of_scope': n == 0}[
        level
    ]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean x?)`` for the closest known name, or ``''`` when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f' (did you mean {close[0]}?)' if close else ''


def check_example(raw: Any, catalog: Catalog | None) -> Example:
    """Validate one parsed line (tools in sorted order); raise ``ValueError`` with the reason."""
    if not isinstance(raw, dict):
        raise ValueError('line is not a JSON object')
    for key in ('id', 'level', 'request', 'tools'):
        if key not in raw:
            raise ValueError(f'missing key {key!r}')
    if raw['level'] not in ALL_LEVELS:
        hint = did_you_mean(str(raw['level']), ALL_LEVELS)
        raise ValueError(
            f'unknown level {raw["level"]!r}{hint} (expected one of {", ".join(ALL_LEVELS)})'
        )
    tools = raw['tools']
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise ValueError('tools must be a list of names')
    if catalog is not None:
        unknown = [t + did_you_mean(t, catalog.names) for t in tools if t not in catalog]
        if unknown:
            raise ValueError(f'unknown tool name(s): {", ".join(unknown)}')
    if len(set(tools)) != len(tools):
        raise ValueError('duplicate tool in the set')
    tools = sorted(tools)
    if not _size_ok(raw['level'], len(tools)):
        raise ValueError(f'level {raw["level"]} cannot have {len(tools)} tool(s)')
    if not isinstance(raw['request'], str) or not raw['request'].strip():
        raise ValueError('request is empty')
    return Example.model_validate({**raw, 'tools': tuple(tools)})


def load_jsonl(path: str | Path, catalog: Catalog | None = None) -> list[Example]:
    """Load and validate a JSONL dataset; :class:`DatasetError` names the first bad line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding='utf-8').splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f'cannot read dataset: {exc}', where=str(path)) from None
    examples: list[Example] = []
    ids: dict[str, int] = {}
    texts: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f'{path}:{number}'
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f'invalid JSON: {exc.msg} at column {exc.colno}', where=where
            ) from None
        try:
            example = check_example(raw, catalog)
        except ValueError as exc:
            raise DatasetError(one_line(exc), where=where) from None
        if example.id in ids:
            raise DatasetError(
                f'duplicate id {example.id!r} (first on line {ids[example.id]})', where=where
            )
        key = ' '.join(example.request.lower().split())
        if key in texts:
            raise DatasetError(f'duplicate request text (first on line {texts[key]})', where=where)
        ids[example.id], texts[key] = number, number
        examples.append(example)
    if not examples:
        raise DatasetError('dataset has no requests', where=str(path))
    return examples


def unsorted_tool_lists(path: str | Path, fix: bool = False) -> list[int]:
    """Line numbers whose ``tools`` list is not in sorted order; ``fix`` rewrites them sorted.

    Only those lines change (keys keep their order); call it on a file that
    :func:`load_jsonl` accepts.
    """
    path = Path(path)
    lines = path.read_text(encoding='utf-8').splitlines(keepends=True)
    found: list[int] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        if raw['tools'] != sorted(raw['tools']):
            found.append(number)
            raw['tools'] = sorted(raw['tools'])
            lines[number - 1] = json.dumps(raw, ensure_ascii=False) + '\n'
    if fix and found:
        path.write_text(''.join(lines), encoding='utf-8')
    return found


def write_jsonl(examples: Iterable[Example], path: str | Path) -> None:
    """Write examples as JSONL, one per line, in the dataset format."""
    with Path(path).open('w', encoding='utf-8') as fh:
        for ex in examples:
            fh.write(json.dumps(ex.model_dump(mode='json'), ensure_ascii=False) + '\n')


def split(
    examples: list[Example], test_fraction: float = 0.4, seed: int = 20261130
) -> tuple[list[Example], list[Example]]:
    """Stratified by level: (dev, test), each in the original order."""
    rng = random.Random(seed)
    by_level: dict[str, list[int]] = defaultdict(list)
    for i, ex in enumerate(examples):
        by_level[ex.level].append(i)
    test_idx: set[int] = set()
    for level in sorted(by_level):
        idx = by_level[level][:]
        rng.shuffle(idx)
        test_idx.update(idx[: round(len(idx) * test_fraction)])
    dev = [ex for i, ex in enumerate(examples) if i not in test_idx]
    test = [ex for i, ex in enumerate(examples) if i in test_idx]
    return dev, test


def stratified_split(
    examples: list[Example],
    test_fraction: float = 0.4,
    seed: int = 20261130,
    keys: tuple[str, ...] = ('level', 'style'),
    keep_test: frozenset[str] = frozenset(),
    keep_dev: frozenset[str] = frozenset(),
) -> tuple[list[Example], list[Example]]:
    """Split stratified by several fields, keeping earlier assignments: (dev, test).

    Requests whose id is in ``keep_test`` / ``keep_dev`` keep that side (an id in
    both is an error). The rest are grouped by ``keys`` (a missing field counts as
    ``''``); the groups are visited in sorted order, each shuffled with ``seed``,
    and the running total of test picks follows ``round(test_fraction * seen)``,
    so every group gets its share to within one request even when it holds only
    a few, and the whole gets ``round(test_fraction * n)``. Each list keeps the
    input order.
    """
    both = keep_test & keep_dev
    if both:
        raise ValueError(f'ids both in kept test and kept dev: {", ".join(sorted(both)[:5])}')
    rng = random.Random(seed)
    groups: dict[tuple[str, ...], list[int]] = defaultdict(list)
    fixed_test: set[int] = set()
    for i, ex in enumerate(examples):
        if ex.id in keep_test:
            fixed_test.add(i)
        elif ex.id not in keep_dev:
            extra = ex.model_extra or {}
            key = tuple(str(getattr(ex, k, None) or extra.get(k) or '') for k in keys)
            groups[key].append(i)
    test_idx = set(fixed_test)
    seen = taken = 0
    for key in sorted(groups):
        idx = groups[key][:]
        rng.shuffle(idx)
        seen += len(idx)
        want = round(test_fraction * seen) - taken
        test_idx.update(idx[:want])
        taken += want
    dev = [ex for i, ex in enumerate(examples) if i not in test_idx]
    test = [ex for i, ex in enumerate(examples) if i in test_idx]
    return dev, test


def writer_sides(examples: Iterable[Example], test_writers: set[str], dev_writers: set[str],
                 keep_test: frozenset[str] = frozenset(),
                 keep_dev: frozenset[str] = frozenset()) -> tuple[frozenset[str], frozenset[str]]:
    """Ids (to dev, to test) of the requests whose ``writer`` is listed on one side.

    A split by writer measures wording nobody in dev used: all of a test writer's requests go
    to test, all of a dev writer's to dev. An id already kept on one side stays there.
    """
    dev: set[str] = set()
    test: set[str] = set()
    for ex in examples:
        if ex.id in keep_test or ex.id in keep_dev:
            continue
        writer = str((ex.model_extra or {}).get('writer') or getattr(ex, 'writer', '') or '')
        if writer in test_writers:
            test.add(ex.id)
        elif writer in dev_writers:
            dev.add(ex.id)
    return frozenset(dev), frozenset(test)


def coverage(examples: Iterable[Example]) -> dict[str, Any]:
    """Counts per level and per tool (and per tool per level)."""
    examples = list(examples)
    per_tool: Counter[str] = Counter()
    per_tool_level: dict[str, Counter[str]] = defaultdict(Counter)
    for ex in examples:
        for t in ex.tools:
            per_tool[t] += 1
            per_tool_level[t][ex.level] += 1
    return {
        'n': len(examples),
        'levels': dict(Counter(ex.level for ex in examples)),
        'per_tool': dict(per_tool),
        'per_tool_level': {t: dict(c) for t, c in per_tool_level.items()},
    }
