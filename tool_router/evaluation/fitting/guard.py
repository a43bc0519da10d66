"""Never fit on what we report on: refuse data that shares requests with a test split.

The reporting splits are every ``test*.jsonl`` under ``benchmarks/data``, at any
depth (``test.jsonl``, ``v2/test.jsonl``; in a source checkout, or installed to
``share/tool_router/benchmarks/data``). Fitting, tuning and augmentation all
call :func:`refuse_reporting_data`. The
check is by content, not by file name: a request counts as the same when its
text matches after case and whitespace are normalised. A renamed test file is
refused; a file that merely has ``test`` in its name is not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, Sequence

from tool_router.common.errors import DatasetError
from tool_router.evaluation.dataset import Example
from tool_router.common.paths import share_dir

_SPACE = re.compile(r'\s+')


def normalise_request(text: str) -> str:
    """Lower case, single spaces: the key two requests are compared by."""
    return _SPACE.sub(' ', text).strip().lower()


def reporting_split_files(data_dir: Path | None = None) -> list[Path]:
    """Every ``test*.jsonl`` under the benchmark data directory, at any depth (sorted)."""
    root = data_dir or share_dir() / 'benchmarks' / 'data'
    return sorted(root.rglob('test*.jsonl')) if root.is_dir() else []


def reporting_requests(files: Iterable[Path]) -> dict[str, str]:
    """Normalised request text -> ``file:id`` of every request of the reporting splits."""
    out: dict[str, str] = {}
    for path in files:
        for n, line in enumerate(Path(path).read_text(encoding='utf-8').splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out.setdefault(normalise_request(str(row['request'])),
                               f'{path.parent.name}/{path.name}:{row.get("id", n)}')
            except (ValueError, KeyError, TypeError):
                continue  # the guard is not a validator; a bad line cannot hide a request
    return out


def refuse_reporting_data(
    examples: Sequence[Example], where: str, files: Sequence[Path] | None = None
) -> list[Path]:
    """Raise :class:`DatasetError` if any example is a request of a reporting split.

    Returns the split files checked (empty when none was found: the caller says so).
    """
    files = reporting_split_files() if files is None else list(files)
    known = reporting_requests(files)
    shared = [(ex.id, known[key]) for ex in examples
              if (key := normalise_request(ex.request)) in known]
    if shared:
        first = ', '.join(f'{mine} = {theirs}' for mine, theirs in shared[:3])
        raise DatasetError(
            f'{len(shared)} of {len(examples)} requests are in a test split ({first}'
            f'{", ..." if len(shared) > 3 else ""}); refusing to fit on them',
            where=where,
            hint='fit on the development split; test splits are for reporting only',
        )
    return files
