"""An example policy in one file (docs/POLICIES.md): every tool whose name shares a word
with the request. Registered by one line in test/test_registry.py."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tool_router.routing.index import CatalogIndex
from tool_router.routing.policies.base import Decision, words
from tool_router.routing.policies.registry import PolicyContext


class KeywordParams(BaseModel):
    """Constants of the example keyword policy."""

    model_config = ConfigDict(extra='forbid')
    min_length: int = Field(3, ge=1, description='Shortest request word that counts.')


class KeywordPolicy:
    name = 'keyword'

    def __init__(self, index: CatalogIndex, params: KeywordParams) -> None:
        self.names = index.catalog.names
        self.params = params

    def route(self, text: str, max_tools: int) -> Decision:
        asked = {w for w in words(text) if len(w) >= self.params.min_length}
        tools = [n for n in self.names if asked & set(n.split('_'))]
        return Decision(self.name, tools, [1.0] * len(tools), abstained=not tools)


def build(ctx: PolicyContext) -> KeywordPolicy:
    return KeywordPolicy(ctx.index, ctx.params(KeywordParams))
