"""The routing wing (pure, no rclpy): request -> the smallest complete set of catalog tools.

:class:`~tool_router.routing.router.Router` is the one entry point; policies live in
:mod:`.policies` behind a registry, the optional LLM client in :mod:`.llm`, the one allowlist
gate in :mod:`.validate`. It imports :mod:`tool_router.common`, never the executor.
"""
