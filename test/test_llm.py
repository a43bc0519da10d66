"""The `llm` policy against a real HTTP server on 127.0.0.1 playing the model."""

from __future__ import annotations

import json
import time

import pytest

from llm_server import ModelServer, closed_port
from tool_router.routing.llm.client import CircuitBreaker, endpoint
from tool_router.routing.llm.parse import parse_reply
from tool_router.common.redact import redact
from tool_router.routing.llm.settings import LLMParams, apply_environment
from tool_router.routing.policies.llm import LLMConsultant, LLMPolicy

KEY = 'sk-test-SECRET-4242'


@pytest.fixture
def server():
    s = ModelServer()
    yield s
    s.close()


@pytest.fixture
def ollama():
    s = ModelServer('ollama')
    yield s
    s.close()


def make(catalog, url, **kw):
    params = LLMParams(url=url, allow_remote=True, model='gpt-oss:120b', **kw)
    return LLMPolicy(LLMConsultant(catalog, params))


def route(policy, text='land when the battery drops below 20%'):
    return policy.route(text, 8)


# --- parsing -----------------------------------------------------------------------------------

NAMES = {'land', 'battery_status', 'takeoff'}


@pytest.mark.parametrize(
    'reply, tools, malformed',
    [
        ('{"tools": ["battery_status", "land"]}', ['battery_status', 'land'], False),
        ('Sure! Here it is: {"tools": ["land"]} Hope it helps.', ['land'], True),
        ('```json\n{"tools": ["takeoff", "land"]}\n```', ['takeoff', 'land'], True),
        ('["land"]', ['land'], True),
        ("tools: ['land', 'takeoff',]", ['land', 'takeoff'], True),
        ('{"tools": ["land", "land"]}', ['land'], False),
        ('{"tools": []}', [], False),
    ],
)
def test_parse_accepts_json_and_recovers_wrapped_json(reply, tools, malformed):
    got = parse_reply(reply, NAMES)
    assert got.tools == tools
    assert got.malformed is malformed
    assert got.invented == []


@pytest.mark.parametrize('reply', ['', '   ', 'I cannot help with that.', '{"answer": 42}'])
def test_parse_empty_or_garbage_gives_no_tools(reply):
    got = parse_reply(reply, NAMES)
    assert got.tools == [] and got.malformed


def test_parse_reports_invented_names_and_keeps_them():
    got = parse_reply('{"tools": ["land", "fly_to_moon", "Land"]}', NAMES)
    assert got.tools == ['land', 'fly_to_moon', 'Land']
    assert got.invented == ['fly_to_moon', 'Land']


# --- request and response shapes -------------------------------------------------------------


def test_openai_shape_catalog_temperature_and_key(catalog, server, monkeypatch):
    monkeypatch.setenv('TOOL_ROUTER_LLM_API_KEY', KEY)
    server.reply('{"tools": ["battery_status", "land"]}')
    decision = route(make(catalog, server.url, temperature=1.0))
    assert decision.tools == ['battery_status', 'land']
    (req,) = server.requests
    assert req['path'] == '/v1/chat/completions'
    body = req['body']
    assert body['model'] == 'gpt-oss:120b'
    assert body['temperature'] == 1.0
    assert body['response_format'] == {'type': 'json_object'}
    system, user = body['messages']
    assert system['role'] == 'system' and user['role'] == 'user'
    for tool in catalog:  # the full catalog, names and summaries
        assert f'- {tool.name} (' in system['content'] and tool.summary in system['content']
    assert '{"tools": [' in system['content']
    assert 'land when the battery drops below 20%' in user['content']
    assert req['headers']['Authorization'] == f'Bearer {KEY}'
    facts = decision.llm
    assert facts.sent and facts.host == server.url.split('//')[1]
    assert facts.provider == 'openai' and facts.model == 'gpt-oss:120b'
    assert not facts.malformed and not facts.timeout and facts.error == ''
    assert facts.duration_ms > 0
    assert KEY not in json.dumps(decision.explanation(), default=str)


def test_ollama_shape(catalog, ollama, monkeypatch):
    monkeypatch.setenv('TOOL_ROUTER_LLM_API_KEY', KEY)
    ollama.reply('{"tools": ["takeoff"]}')
    decision = route(make(catalog, ollama.url, provider='ollama', temperature=0.3), 'take off')
    assert decision.tools == ['takeoff']
    (req,) = ollama.requests
    assert req['path'] == '/api/chat'
    body = req['body']
    assert body['stream'] is False and body['format'] == 'json'
    assert body['options']['temperature'] == 0.3 and body['model'] == 'gpt-oss:120b'
    assert 'return_to_home' in body['messages'][0]['content']
    assert req['headers']['Authorization'] == f'Bearer {KEY}'
    assert decision.llm.provider == 'ollama'


def test_endpoint_tolerates_v1_suffix():
    assert endpoint(LLMParams(url='http://h:8000/v1/')) == 'http://h:8000/v1/chat/completions'
    assert (
        endpoint(LLMParams(url='http://h:11434', provider='ollama')) == 'http://h:11434/api/chat'
    )


# --- replies and failures --------------------------------------------------------------------


def test_prose_and_fenced_replies_are_recovered(catalog, server):
    server.reply(
        'The answer:\n```json\n{"tools": ["land"]}\n```', 'I pick {"tools": ["takeoff"]}.'
    )
    policy = make(catalog, server.url)
    first, second = route(policy), route(policy)
    assert first.tools == ['land'] and first.llm.malformed
    assert second.tools == ['takeoff'] and second.llm.malformed


def test_invented_names_are_dropped_by_the_router(catalog, fake_index, server):
    from tool_router.routing.config import RouterConfig
    from tool_router.routing.router import Router

    server.reply('{"tools": ["land", "summon_pizza"]}')
    config = RouterConfig(chroma_ephemeral=True, llm=LLMParams(url=server.url, allow_remote=True))
    result = Router(config, index=fake_index).route('land now', 'llm')
    assert result.tools == ['land']
    assert result.dropped == ['summon_pizza']
    assert result.decision.llm.invented == ['summon_pizza']


@pytest.mark.parametrize(
    'step, error',
    [
        ({'content': ''}, 'empty reply'),
        ({'content': 'no idea, sorry'}, 'unparseable reply'),
        ({'status': 500, 'body': {'error': 'boom'}}, 'http'),
        ({'body': '<html>not json</html>'}, 'bad_response'),
    ],
)
def test_failures_give_no_tools(catalog, server, step, error):
    server.reply(step)
    decision = route(make(catalog, server.url))
    assert decision.tools == [] and decision.abstained
    assert decision.llm.error.startswith(error)
    assert decision.llm.sent
    assert decision.fallback_reason


def test_slow_reply_times_out(catalog, server):
    """The call is abandoned at its budget and the late answer is ignored (what happened; the
    timing itself is measured by benchmarks/deadline.py)."""
    server.reply({'content': '{"tools": ["land"]}', 'delay': 2.0})
    decision = route(make(catalog, server.url, timeout_s=0.3))
    assert decision.tools == [] and decision.abstained
    facts = decision.llm
    assert facts.timeout is True and facts.sent is True
    assert 'timeout' in facts.error and '0.30 s' in facts.error


def test_connection_refused(catalog):
    decision = route(make(catalog, f'http://127.0.0.1:{closed_port()}'))
    assert decision.tools == []
    assert decision.llm.error.startswith('connect')
    assert not decision.llm.timeout


def test_circuit_breaker_opens_and_closes(catalog, server):
    server.reply(
        {'status': 500, 'body': '{}'}, {'status': 503, 'body': '{}'}, '{"tools": ["land"]}'
    )
    policy = make(catalog, server.url, breaker_failures=2, breaker_cooldown_s=0.4)
    route(policy), route(policy)
    assert len(server.requests) == 2
    blocked = route(policy)
    assert len(server.requests) == 2  # no call while open
    assert 'circuit open' in blocked.fallback_reason
    assert blocked.llm.sent is False
    time.sleep(0.45)
    recovered = route(policy)
    assert recovered.tools == ['land'] and len(server.requests) == 3
    assert policy.consultant.client.breaker.state == 'closed'


def test_breaker_half_open_failure_reopens():
    now = [0.0]
    breaker = CircuitBreaker(2, 10.0, clock=lambda: now[0])
    breaker.record_failure()
    assert breaker.allow()[0]
    breaker.record_failure()
    assert breaker.state == 'open' and not breaker.allow()[0]
    now[0] = 10.0
    assert breaker.allow()[0]  # one trial
    assert not breaker.allow()[0]  # and only one
    breaker.record_failure()
    assert breaker.state == 'open'
    now[0] = 20.0
    assert breaker.allow()[0]
    breaker.record_success()
    assert breaker.state == 'closed'


def test_key_not_in_errors(catalog, server, monkeypatch):
    monkeypatch.setenv('TOOL_ROUTER_LLM_API_KEY', KEY)
    server.reply({'status': 401, 'body': {'error': f'bad key {KEY}'}})
    decision = route(make(catalog, server.url))
    assert 'HTTP 401' in decision.llm.error
    assert KEY not in json.dumps(decision.explanation(), default=str)


# --- redaction, safe defaults, environment ---------------------------------------------------


def test_redaction_strips_numbers_coordinates_and_names(catalog, server):
    text = 'Fly to 47.6101, -122.3331 near Smith Farm, then land when the battery is below 25%'
    policy = make(catalog, server.url, redact=True, redact_names='smith farm, Lake Ilo')
    decision = route(policy, text)
    sent = server.requests[0]['body']['messages'][1]['content']
    for secret in ('47.6101', '122.3331', '25', 'Smith', 'Farm'):
        assert secret not in sent
    assert 'battery' in sent and '<coordinates>' in sent and '<name>' in sent
    assert decision.llm.redacted == 3


def test_redact_keeps_units():
    assert redact('climb to 120 m').text == 'climb to <number> m'
    assert redact('no numbers here').count == 0


@pytest.mark.parametrize(
    'params', [LLMParams(), LLMParams(url='http://127.0.0.1:1', allow_remote=False)]
)
def test_disabled_by_default_sends_nothing(catalog, server, params):
    if params.url:
        params = params.model_copy(update={'url': server.url})
    decision = route(LLMPolicy(LLMConsultant(catalog, params)))
    assert server.requests == []
    assert decision.tools == [] and decision.llm.sent is False
    assert 'disabled' in decision.fallback_reason


def test_environment_overrides_the_file():
    base = LLMParams(url='http://file:1', model='file-model')
    env = {
        'TOOL_ROUTER_LLM_URL': 'http://env:2',
        'TOOL_ROUTER_LLM_MODEL': 'env-model',
        'TOOL_ROUTER_LLM_PROVIDER': 'ollama',
        'TOOL_ROUTER_ALLOW_REMOTE': '1',
        'TOOL_ROUTER_LLM_TIMEOUT_S': '7.5',
    }
    got = apply_environment(base, env)
    assert (got.url, got.model, got.provider, got.allow_remote, got.timeout_s) == (
        'http://env:2',
        'env-model',
        'ollama',
        True,
        7.5,
    )
    assert apply_environment(base, {}) == base
    assert (
        apply_environment(
            base.model_copy(update={'allow_remote': True}), {'TOOL_ROUTER_ALLOW_REMOTE': '0'}
        ).allow_remote
        is False
    )


def test_bad_environment_is_a_config_error():
    from tool_router.common.errors import ConfigError

    with pytest.raises(ConfigError, match='provider'):
        apply_environment(LLMParams(), {'TOOL_ROUTER_LLM_PROVIDER': 'gemini'})
    with pytest.raises(ConfigError, match="TOOL_ROUTER_ALLOW_REMOTE='maybe' is neither"):
        apply_environment(LLMParams(), {'TOOL_ROUTER_ALLOW_REMOTE': 'maybe'})
    off = apply_environment(LLMParams(), {'TOOL_ROUTER_ALLOW_REMOTE': ' Off '})
    assert off.allow_remote is False
