"""The small exception family of tool_router.

Every error says what went wrong, where, and what to do about it. The ROS
nodes map them to ``success=False`` and a message; they never escape a
callback.
"""
from __future__ import annotations

from typing import Any


class ToolRouterError(Exception):
    """Base class: a problem the caller can act on."""

    def __init__(self, what: str, *, where: str = '', hint: str = '') -> None:
        self.what = what
        self.where = where
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        text = f'{self.where}: {self.what}' if self.where else self.what
        if self.hint:
            text += f' ({self.hint})'
        return text


class CatalogError(ToolRouterError):
    """The tool catalog file is missing, malformed or inconsistent."""


class ConfigError(ToolRouterError):
    """A configuration file or parameter is invalid."""


class RequestError(ToolRouterError):
    """A routing request is invalid (empty, too long, bad encoding, unknown policy)."""


class IndexStoreError(ToolRouterError):
    """The vector index cannot be opened, built or queried."""


class DatasetError(ToolRouterError):
    """An evaluation dataset is malformed."""


class LLMError(ToolRouterError):
    """A remote language model failed: timeout, HTTP error, unusable reply."""


def first_error(exc: Any) -> str:
    """The first error of a pydantic ``ValidationError`` as one line: ``field.path: message``."""
    errors = exc.errors()
    if not errors:
        return str(exc).splitlines()[0]
    first = errors[0]
    field = '.'.join(str(part) for part in first.get('loc', ()))
    return f"{field}: {first['msg']}" if field else str(first['msg'])


def error_field(exc: Any) -> str:
    """The dotted field name of a pydantic ``ValidationError``'s first error ('' if none)."""
    errors = exc.errors()
    return '.'.join(str(part) for part in errors[0].get('loc', ())) if errors else ''
