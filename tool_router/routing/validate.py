"""The one allowlist gate every answer passes before it leaves the router."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from tool_router.common.catalog import Catalog


@dataclass
class Validated:
    """The validated selection and what was removed, and why."""

    tools: list[str]
    scores: list[float]
    dropped: list[str] = field(default_factory=list)       # names outside the catalog
    duplicates: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)     # over the max-tools bound


def validate_selection(tools: Sequence[str], scores: Sequence[float] | None, catalog: Catalog,
                       max_tools: int) -> Validated:
    """Keep catalog names only, first occurrence only, at most ``max_tools``, order kept."""
    if scores is None or len(scores) != len(tools):
        scores = [0.0] * len(tools)
    out = Validated([], [])
    allowed = catalog.by_name
    for name, score in zip(tools, scores):
        if not isinstance(name, str) or name not in allowed:
            out.dropped.append(str(name))
        elif name in out.tools:
            out.duplicates.append(name)
        elif len(out.tools) >= max_tools:
            out.truncated.append(name)
        else:
            out.tools.append(name)
            out.scores.append(float(score))
    return out
