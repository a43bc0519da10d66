"""Why the router chose what it chose: typed facts of a decision, one JSON form across ROS.

:class:`Explanation` is written once, by the router
(:meth:`tool_router.routing.router.RouteResult.explanation`), sent as
``explanation_json`` on ``RouteRequest`` and ``SelectedCapabilities``, and read
back with :meth:`Explanation.from_json` by the executor, the evaluation and
the bag tools. :class:`LLMFacts` and :class:`HybridFacts` are what the LLM and
hybrid policies report about a call; they travel inside the decision and the
explanation as typed fields, never as dicts with string keys.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import first_error


class _Model(BaseModel):
    model_config = ConfigDict(extra='forbid')


class LLMFacts(_Model):
    """One attempt to ask the language model, as recorded for traces and evaluation."""

    sent: bool = Field(False, description='The request left the vehicle.')
    host: str = ''
    provider: str = ''
    model: str = ''
    duration_ms: float = 0.0
    timeout: bool = False
    malformed: bool = Field(False, description='The reply needed the regex fallback.')
    invented: list[str] = Field(default_factory=list, description='Names not in the catalog.')
    ignored: list[str] = Field(
        default_factory=list, description='hybrid: picks outside the names offered.'
    )
    error: str = ''
    redacted: int = Field(0, description='Spans removed before sending.')
    prompt_tools: int = Field(0, description='Tools described in the prompt.')
    circuit: str = Field('closed', description='Circuit breaker state after the call.')


class GateSignals(_Model):
    """The hybrid gate's view of a local decision."""

    confidence: float
    margin: float
    n_tools: int
    abstained: bool


class HybridFacts(_Model):
    """What the hybrid policy did with the local decision."""

    local_policy: str
    local_tools: list[str] = Field(default_factory=list)
    gate: GateSignals
    gate_reason: str = ''
    llm_mode: str = Field('', description="'refine' or 'full' when the LLM was asked.")
    llm_skipped: str = Field('', description='Why no call was made ("" when one was).')


class EvidenceItem(_Model):
    """Why a tool was considered: one retrieved record, lexical match or model score."""

    source: str
    fragment: str
    detail: str
    value: float


class RemovedSpan(_Model):
    """A part of the request the safety screen removed (tool_router/routing/safety.py)."""

    text: str
    reason: str


class ReadAs(_Model):
    """An order typed as code calls, and the words the policy routed instead."""

    text: str
    words: str


class SafetyReport(_Model):
    """What the safety screen removed or read differently before the policy saw the request."""

    removed: list[RemovedSpan] = Field(default_factory=list)
    kept: str = Field('', description='The text the policy routed (first 240 characters).')
    read_as: list[ReadAs] = Field(
        default_factory=list, description='Code calls read as their words (docs/SAFETY.md).'
    )


class QuestionDrop(_Model):
    """An actuator dropped because its clause asks about a state (routing/questions.py)."""

    tool: str
    clause: str = Field('', description='The clause that asks.')
    reason: str = Field('', description="Why the clause is a question ('a wh-question ...').")
    answered_by: str = Field('', description="The sensor that answers instead ('' = none).")


class Explanation(_Model):
    """The router's explanation of one answer (the ``explanation_json`` of the interfaces)."""

    policy: str = ''
    fragments: list[str] = Field(default_factory=list)
    abstained: bool = False
    confidence: float = 1.0
    note: str = ''
    candidates: list[tuple[str, float]] = Field(
        default_factory=list, description='Best candidates before the cut, (tool, score).'
    )
    evidence: dict[str, list[EvidenceItem]] = Field(default_factory=dict)
    clause_index: dict[str, int] = Field(default_factory=dict)
    conditions: dict[str, str] = Field(default_factory=dict)
    dropped: list[str] = Field(default_factory=list, description='Names outside the catalog.')
    duplicates: list[str] = Field(default_factory=list, description='Names given twice.')
    truncated: list[str] = Field(
        default_factory=list, description='Tools cut by the max_tools bound.'
    )
    max_tools: int = Field(0, description='The bound applied (0 = unknown).')
    fallback_used: bool = False
    fallback_reason: str = ''
    llm: LLMFacts | None = None
    hybrid: HybridFacts | None = None
    safety: SafetyReport | None = None
    questions: list[QuestionDrop] = Field(
        default_factory=list,
        description='Actuators dropped from clauses that ask about a state, and why.',
    )
    in_scope: float | None = Field(None, description="lcr's in-scope probability, if any.")

    def to_json(self) -> str:
        """The JSON text sent as ``explanation_json``."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> 'Explanation':
        """Parse ``explanation_json``; '' is an empty explanation; bad text raises ValueError."""
        if not text:
            return cls()
        try:
            return cls.model_validate(json.loads(text))
        except json.JSONDecodeError as exc:
            raise ValueError(f'explanation is not JSON: {exc}') from None
        except pydantic.ValidationError as exc:
            raise ValueError(f'invalid explanation: {first_error(exc)}') from None

    @classmethod
    def read(cls, text: str, on_error: Any = None) -> 'Explanation':
        """Like :meth:`from_json`, but an unreadable explanation is an empty one.

        ``on_error(message)`` is called when the text could not be read, so
        the caller can say so; the tools and scores of a message stand on their own.
        """
        try:
            return cls.from_json(text)
        except ValueError as exc:
            if on_error is not None:
                on_error(str(exc))
            return cls()
