"""The small exception family of tool_router.

Every error says what went wrong, where, and what to do about it. The ROS
nodes map them to ``success=False`` and a message; they never escape a
callback.
"""
from __future__ import annotations


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
