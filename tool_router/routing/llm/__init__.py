"""Optional large-language-model routing: providers, prompt, reply parsing.

Redaction of what is sent lives in :mod:`tool_router.common.redact`.

Nothing here is imported by the router unless the ``llm`` or ``hybrid`` policy
is built; ``settings`` (pydantic only) is what the configuration imports.
"""
