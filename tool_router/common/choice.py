"""One selected tool with its facts: the typed unit that crosses from routing to execution.

A :class:`ToolChoice` is what the router decided about one tool -- its score, the request
clause that chose it, the condition that gates it, the evidence behind it. The policies'
:class:`~tool_router.routing.policies.base.Decision` yields them, a
:class:`~tool_router.routing.router.RouteResult` carries them, the router node sends them as
``ToolChoice[]`` (``SelectedCapabilities.choices``), the executor's
:class:`~tool_router.executor.pipeline.Selection` holds them, and each per-tool trace entry
(:class:`~tool_router.executor.traces.ToolTrace`) extends one. Nothing travels as parallel arrays.
"""
from __future__ import annotations

from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.explanation import EvidenceItem


class ToolChoice(BaseModel):
    """One selected tool and everything the executor needs to know about the choice."""

    model_config = ConfigDict(extra='forbid')

    tool: str = Field(description='Catalog tool name (inside the allowlist).')
    score: float = Field(0.0, description="The policy's score for it.")
    clause_index: int = Field(-1, description='Request clause that chose it (-1 = whole request).')
    condition: str = Field('', description="Condition text that gates it ('' = unconditional).")
    evidence: list[EvidenceItem] = Field(default_factory=list,
                                         description='Why it was chosen (at most 4 items).')


def names(choices: Iterable[ToolChoice]) -> list[str]:
    """The tool names of ``choices``, in order."""
    return [c.tool for c in choices]


def in_clause_order(choices: Iterable[ToolChoice]) -> list[ToolChoice]:
    """``choices`` in dispatch order: by the clause that chose them, then as given.

    A whole-request choice (clause -1) comes after the clause-bound ones, as before.
    """
    listed = list(choices)
    order = sorted(range(len(listed)),
                   key=lambda i: (listed[i].clause_index if listed[i].clause_index >= 0
                                  else 10_000, i))
    return [listed[i] for i in order]
