"""Parameters of the ``llm`` and ``hybrid`` policies, and their environment overrides.

Kept free of heavy imports: :mod:`tool_router.routing.config` imports this module.

Precedence, lowest to highest: the defaults below, ``config/router.yaml`` (or
``--config``), ``--set`` / node parameters, then the ``TOOL_ROUTER_LLM_*``
environment variables, applied when the policy is built
(:func:`apply_environment`). The API key is only ever read from the
environment variable named by ``api_key_env``; it is not a parameter.
"""

from __future__ import annotations

import os
from typing import Mapping
from urllib.parse import urlsplit

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import ConfigError, first_problem

ENV_URL = 'TOOL_ROUTER_LLM_URL'
ENV_MODEL = 'TOOL_ROUTER_LLM_MODEL'
ENV_PROVIDER = 'TOOL_ROUTER_LLM_PROVIDER'
ENV_API_KEY = 'TOOL_ROUTER_LLM_API_KEY'
ENV_ALLOW_REMOTE = 'TOOL_ROUTER_ALLOW_REMOTE'
ENV_TIMEOUT = 'TOOL_ROUTER_LLM_TIMEOUT_S'


class LLMParams(BaseModel):
    """How to reach the language model. Defaults are safe: no endpoint, no remote call."""

    model_config = ConfigDict(extra='forbid')

    url: str = Field(
        '',
        description="Base URL of the model server ('' = LLM disabled), "
        'e.g. http://127.0.0.1:11434 (Ollama) or http://host:8000 (vLLM).',
    )
    provider: str = Field(
        'openai',
        pattern='^(openai|ollama)$',
        description='openai: POST {url}/v1/chat/completions; ollama: POST {url}/api/chat.',
    )
    model: str = Field(
        'gpt-oss:120b', min_length=1, description='Model name sent with every request.'
    )
    allow_remote: bool = Field(
        False, description='Must be true for any request to leave the router.'
    )
    temperature: float = Field(1.0, ge=0, le=2, description='Sampling temperature (paper: 1.0).')
    max_tokens: int = Field(
        512, ge=16, le=32768, description='Most tokens the model may generate.'
    )
    timeout_s: float = Field(
        120.0, gt=0, le=600, description='Total time allowed for one call (paper: 120 s).'
    )
    connect_timeout_s: float = Field(
        2.0, gt=0, le=60, description='Time allowed to open the connection.'
    )
    json_mode: bool = Field(
        True,
        description='Ask the server for JSON output (OpenAI response_format '
        'json_object; Ollama always sends format=json).',
    )
    api_key_env: str = Field(
        ENV_API_KEY,
        description='Environment variable that holds the API key '
        '(sent as a Bearer token, never logged).',
    )
    redact: bool = Field(
        False, description='Strip numbers, coordinates and redact_names from the request.'
    )
    redact_names: str = Field(
        '', description='Comma-separated names (places, people) to strip when redact.'
    )
    breaker_failures: int = Field(
        3, ge=1, le=100, description='Consecutive failures that open the circuit.'
    )
    breaker_cooldown_s: float = Field(
        30.0, ge=0, le=3600, description='Seconds the circuit stays open.'
    )

    def enabled(self) -> tuple[bool, str]:
        """(True, '') when a call may be made, else (False, why not)."""
        if not self.url:
            return False, 'LLM disabled: no endpoint configured (llm.url / TOOL_ROUTER_LLM_URL)'
        if not self.allow_remote:
            return (
                False,
                'LLM disabled: allow_remote is false '
                '(llm.allow_remote / TOOL_ROUTER_ALLOW_REMOTE=1)',
            )
        parts = urlsplit(self.url)
        if parts.scheme not in ('http', 'https') or not parts.hostname:
            return False, 'LLM disabled: llm.url must be http(s)://host[:port]'
        return True, ''

    def host(self) -> str:
        """host:port of the endpoint, for traces ('' when none)."""
        parts = urlsplit(self.url)
        if not parts.hostname:
            return ''
        return f'{parts.hostname}:{parts.port}' if parts.port else parts.hostname

    def names_to_redact(self) -> list[str]:
        """The comma-separated ``redact_names`` as a list."""
        return [n.strip() for n in self.redact_names.split(',') if n.strip()]


class HybridParams(BaseModel):
    """Local policy first; the LLM only when the local answer looks uncertain."""

    model_config = ConfigDict(extra='forbid')

    local_policy: str = Field(
        '', description="Local policy to run first ('' = the router's default policy)."
    )
    mode: str = Field(
        'refine',
        pattern='^(refine|full)$',
        description='refine: send only the local top-k candidates; full: send the whole catalog.',
    )
    refine_top_k: int = Field(10, ge=1, le=42, description='Candidates sent in refine mode.')
    merge: str = Field(
        'llm',
        pattern='^(llm|union)$',
        description='llm: answer with the LLM picks (within the candidates in refine mode); '
        'union: LLM picks plus local tools scoring at least keep_local_score.',
    )
    keep_local_score: float = Field(
        0.9, ge=0, le=1, description='union merge: local score kept regardless.'
    )
    deadline_ms: float = Field(
        3000.0, gt=0, le=600_000, description='Routing deadline; the LLM gets what is left.'
    )
    min_llm_budget_ms: float = Field(
        100.0, ge=0, description='Skip the LLM when less than this is left.'
    )
    gate: str = Field(
        'fitted',
        pattern='^(fitted|always|never)$',
        description='fitted: ask the LLM when the local decision is uncertain (below).',
    )
    # The fitted gate (config/router.yaml says how; test_defaults.py keeps the two equal).
    gate_confidence: float = Field(
        0.5231, ge=0, le=1, description='Uncertain when Decision.confidence is below.'
    )
    gate_margin: float = Field(
        0.9338,
        ge=0,
        le=1,
        description='Uncertain when the normalised margin between the '
        'last kept and first dropped candidate is below.',
    )
    gate_min_tools: int = Field(
        7, ge=1, le=43, description='Uncertain when the local answer has this many tools.'
    )
    gate_on_abstain: bool = Field(
        False, description='Uncertain when the local policy returned no tool.'
    )


TRUE_WORDS = ('1', 'true', 'yes', 'on')
FALSE_WORDS = ('0', 'false', 'no', 'off')


def _truthy(name: str, value: str) -> bool:
    """A yes/no environment variable; anything else is a ConfigError (never silently false)."""
    word = value.strip().lower()
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    raise ConfigError(
        f'{name}={value!r} is neither true nor false',
        where='environment',
        hint=f'use one of {"/".join(TRUE_WORDS)} or {"/".join(FALSE_WORDS)}',
    )


def apply_environment(params: LLMParams, environ: Mapping[str, str] | None = None) -> LLMParams:
    """Return ``params`` with the TOOL_ROUTER_LLM_* environment variables applied (env wins)."""
    env = os.environ if environ is None else environ
    update: dict[str, object] = {}
    if env.get(ENV_URL):
        update['url'] = env[ENV_URL].strip()
    if env.get(ENV_MODEL):
        update['model'] = env[ENV_MODEL].strip()
    if env.get(ENV_PROVIDER):
        update['provider'] = env[ENV_PROVIDER].strip().lower()
    if env.get(ENV_ALLOW_REMOTE) is not None and env.get(ENV_ALLOW_REMOTE, '').strip() != '':
        update['allow_remote'] = _truthy(ENV_ALLOW_REMOTE, env[ENV_ALLOW_REMOTE])
    if env.get(ENV_TIMEOUT):
        update['timeout_s'] = env[ENV_TIMEOUT].strip()
    if not update:
        return params
    try:
        return LLMParams.model_validate({**params.model_dump(), **update})
    except pydantic.ValidationError as exc:
        problem = first_problem(exc)
        name = str(problem.loc[0]) if problem.loc else '?'
        raise ConfigError(
            f'llm.{name} from the environment: {problem.msg}',
            where='environment',
            hint='fix or unset the TOOL_ROUTER_LLM_* variable',
        ) from None
