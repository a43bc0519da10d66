"""Optional large-language-model routing: providers, prompt, reply parsing, redaction.

Nothing here is imported by the router unless the ``llm`` or ``hybrid`` policy
is built; ``settings`` (pydantic only) is what the configuration imports.
"""
