"""The small exception family of tool_router.

Every error says what went wrong, where, and what to do about it. The ROS
nodes map them to ``success=False`` and a message; they never escape a
callback.
"""
from __future__ import annotations

from typing import Any, NamedTuple


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


class Problem(NamedTuple):
    """The first error of a pydantic ``ValidationError``: where, the dotted field, the message."""

    loc: tuple[Any, ...]
    field: str
    msg: str
    more: int  # how many other errors there are

    def __str__(self) -> str:
        return f'{self.field}: {self.msg}' if self.field else self.msg


def first_problem(exc: Any) -> Problem:
    """The first error of a pydantic ``ValidationError`` (the one idiom every loader uses)."""
    errors = exc.errors()
    if not errors:
        return Problem((), '', str(exc).splitlines()[0], 0)
    first = errors[0]
    loc = tuple(first.get('loc', ()))
    return Problem(loc, '.'.join(str(p) for p in loc), str(first['msg']), len(errors) - 1)


def first_error(exc: Any) -> str:
    """The first error of a pydantic ``ValidationError`` as one line: ``field.path: message``."""
    return str(first_problem(exc))


def one_line(exc: Exception) -> str:
    """An exception as one line: a pydantic error's first problem, else the first line."""
    if callable(getattr(exc, 'errors', None)):
        return first_error(exc)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
