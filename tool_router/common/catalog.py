"""The allowlisted tool catalog: a validated, immutable list of tools.

The catalog file is YAML (``config/catalog.yaml``)::

    version: 1
    tools:
      - name: battery_status
        kind: sensor          # sensor | actuator
        risk: none            # none | motion | payload | critical
        summary: "..."        # one-sentence contract
        description: "..."    # richer text for retrieval
        keywords: [battery, charge]
        examples: ["how much battery is left"]
        conditions: ["when the battery drops below 20%"]   # sensors only

A malformed file raises :class:`CatalogError` naming the file, line and field;
nothing partial is ever returned.
"""

from __future__ import annotations

import hashlib
import json
import re
from enum import Enum
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tool_router.common.errors import CatalogError, first_problem
from tool_router.common.yaml_util import line_of, load_yaml_with_lines

NAME_PATTERN = re.compile(r'^[a-z][a-z0-9_]*$')
_TOOL_NAME = re.compile(r'\b[a-z0-9]+_[a-z0-9_]+\b')
_SENTENCE = re.compile(r'(?<=[.!?])\s+')


class Kind(str, Enum):
    """What a tool does to the world: reads (sensor) or acts (actuator)."""

    SENSOR = 'sensor'
    ACTUATOR = 'actuator'


class Risk(str, Enum):
    """How much harm a wrong call can do; the executor's permissions key on it."""

    NONE = 'none'
    MOTION = 'motion'
    PAYLOAD = 'payload'
    CRITICAL = 'critical'


def _non_empty_strings(values: list[str], field: str) -> list[str]:
    cleaned = []
    for value in values:
        value = value.strip()
        if not value:
            raise ValueError(f'{field} contains an empty entry')
        cleaned.append(value)
    return cleaned


class Tool(BaseModel):
    """One allowlisted capability."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    name: str = Field(
        description='Fixed tool name, referenced by benchmarks, traces and permissions.'
    )
    kind: Kind = Field(description='sensor (read-only) or actuator (changes state).')
    risk: Risk = Field(description='Risk class used by the executor permissions.')
    summary: str = Field(min_length=1, description='One-sentence contract of the tool.')
    description: str = Field(min_length=1, description='Richer description used for retrieval.')
    keywords: tuple[str, ...] = Field(
        default=(), description='Words and short phrases specific to this tool.'
    )
    examples: tuple[str, ...] = Field(
        default=(), description='Example requests that need only this tool.'
    )
    conditions: tuple[str, ...] = Field(
        default=(), description='Condition clauses this sensor observes.'
    )

    @field_validator('name')
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME_PATTERN.match(value):
            raise ValueError(f'tool name {value!r} must be lower_snake_case')
        return value

    @field_validator('summary', 'description')
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError('must not be blank')
        return ' '.join(value.split())

    @field_validator('keywords')
    @classmethod
    def _keywords(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(v.lower() for v in _non_empty_strings(list(values), 'keywords'))

    @field_validator('examples', 'conditions')
    @classmethod
    def _phrases(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_non_empty_strings(list(values), 'phrases'))

    @model_validator(mode='after')
    def _conditions_on_sensors(self) -> 'Tool':
        if self.conditions and self.kind is not Kind.SENSOR:
            raise ValueError('conditions are only allowed on sensors')
        return self

    @property
    def document(self) -> str:
        """The text indexed for this tool as a whole: name, summary and description.

        Description sentences that point to a neighbouring tool by name ("landing
        on a pad is precision_landing") help a reader or an LLM, but would pull
        this tool's embedding towards the neighbour, so they are left out.
        """
        sentences = _SENTENCE.split(self.description)
        own = ' '.join(s for s in sentences if not _TOOL_NAME.search(s))
        return f'{self.name.replace("_", " ")}: {self.summary} {own}'.strip()


class Catalog(BaseModel):
    """The validated catalog. Iterable over tools; ``in`` tests names."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    version: int = Field(ge=1, description='Catalog schema version.')
    tools: tuple[Tool, ...] = Field(min_length=1, description='The allowlisted tools.')

    @model_validator(mode='after')
    def _unique(self) -> 'Catalog':
        seen: set[str] = set()
        for tool in self.tools:
            if tool.name in seen:
                raise ValueError(f'duplicate tool name {tool.name!r}')
            seen.add(tool.name)
        return self

    def __iter__(self) -> Iterator[Tool]:  # type: ignore[override]
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    @cached_property
    def names(self) -> tuple[str, ...]:
        """Tool names in catalog order (computed once: the catalog is frozen)."""
        return tuple(t.name for t in self.tools)

    @cached_property
    def columns(self) -> Mapping[str, int]:
        """Each tool's position in catalog order (computed once: the catalog is frozen)."""
        return MappingProxyType({name: i for i, name in enumerate(self.names)})

    @cached_property
    def by_name(self) -> Mapping[str, Tool]:
        """Tools by name (computed once; every answer is validated against it)."""
        return MappingProxyType({t.name: t for t in self.tools})

    def get(self, name: str) -> Tool:
        """The tool called ``name``; a CatalogError names unknown ones."""
        try:
            return self.by_name[name]
        except KeyError:
            raise CatalogError(f'unknown tool {name!r}') from None

    def content_hash(self) -> str:
        """Stable hash of everything that affects the index."""
        payload = json.dumps(self.model_dump(mode='json'), sort_keys=True)
        return hashlib.sha256(payload.encode('utf-8')).hexdigest()


def _check_unique_names(data: dict[str, Any], node: Any, path: Path) -> None:
    """Raise naming the line of the second entry of a tool name (the model cannot: no loc)."""
    tools = data.get('tools')
    if not isinstance(tools, list):
        return
    first: dict[str, int] = {}
    for i, tool in enumerate(tools):
        name = tool.get('name') if isinstance(tool, dict) else None
        if not isinstance(name, str):
            continue
        if name in first:
            line = line_of(node, ['tools', i])
            earlier = line_of(node, ['tools', first[name]])
            raise CatalogError(
                f'duplicate tool name {name!r} (first defined on line {earlier})',
                where=f'{path}:{line}' if line else str(path),
                hint='every tool name must be unique; remove or rename one entry',
            )
        first[name] = i


def load_catalog(path: str | Path) -> Catalog:
    """Load and validate a catalog file; raise :class:`CatalogError` on any problem."""
    path = Path(path)
    data, node = load_yaml_with_lines(path, CatalogError)
    if not isinstance(data, dict):
        raise CatalogError(
            'top level must be a mapping with "version" and "tools"', where=str(path)
        )
    _check_unique_names(data, node, path)
    try:
        catalog = Catalog.model_validate(data)
    except pydantic.ValidationError as exc:
        problem = first_problem(exc)
        loc = problem.loc
        line = line_of(node, list(loc))
        field = problem.field or '(top level)'
        tool = ''
        if len(loc) >= 2 and loc[0] == 'tools' and isinstance(loc[1], int):
            raw = data.get('tools') or []
            if loc[1] < len(raw) and isinstance(raw[loc[1]], dict):
                tool = f' (tool {raw[loc[1]].get("name", "?")!r})'
        more = f'; {problem.more} more error(s)' if problem.more else ''
        raise CatalogError(
            f'field {field}{tool}: {problem.msg}{more}',
            where=f'{path}:{line}' if line else str(path),
            hint='fix the catalog; the router refuses to serve a partial catalog',
        ) from None
    return catalog


def default_catalog_path() -> Path:
    """The catalog shipped with the package (source checkout or installed share/)."""
    from tool_router.common.paths import config_path

    return config_path('catalog.yaml')
