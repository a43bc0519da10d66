"""Whatever the endpoint returns (size, count, nesting, encoding, slowness), the LLM call ends
within its budget with a reasoned, degraded answer. A real HTTP server on 127.0.0.1 plays the
hostile model; the tests check what happened, never how long it took (benchmarks/
llm_deadline.py measures the time).
"""

from __future__ import annotations

import json

import pytest

from llm_server import ModelServer, openai_reply
from tool_router.routing.llm.client import MAX_REPLY_BYTES
from tool_router.routing.llm.parse import MAX_NAMES, parse_reply
from tool_router.routing.llm.settings import LLMParams
from tool_router.routing.policies.llm import LLMConsultant, LLMPolicy

NAMES = {'land', 'takeoff'}


@pytest.fixture
def server():
    s = ModelServer()
    yield s
    s.close()


def make(catalog, url, **kw):
    kw.setdefault('breaker_failures', 100)
    return LLMPolicy(LLMConsultant(catalog, LLMParams(url=url, allow_remote=True, **kw)))


def route(policy):
    return policy.route('land now', 8)


def test_parse_keeps_a_bounded_number_of_distinct_names():
    reply = json.dumps({'tools': [f'tool_{i}' for i in range(5000)] + ['land', 'land']})
    got = parse_reply(reply, NAMES)
    assert len(got.tools) == MAX_NAMES
    assert got.skipped == 5000 + 2 - MAX_NAMES
    assert 'skipped' in got.reason
    assert len(got.invented) == MAX_NAMES


def test_parse_skips_nested_and_overlong_items():
    reply = json.dumps({'tools': [['land'], {'x': [1]}, None, 'x' * 500, 'land', 'land']})
    got = parse_reply(reply, NAMES)
    assert got.tools == ['land']
    assert got.skipped == 4


def test_parse_of_deeply_nested_text_gives_no_tools():
    for text in ('[' * 100_000, '{"tools": ' + '[' * 100_000, '{' * 50_000 + '}' * 50_000):
        got = parse_reply(text, NAMES)
        assert got.tools == [] and got.malformed


def test_oversized_body_is_refused_unread(catalog, server):
    names = [f'tool_{i}' for i in range(100_000)] + ['land']
    server.reply(json.dumps({'tools': names}))
    decision = route(make(catalog, server.url, timeout_s=3))
    assert decision.tools == []
    assert decision.llm.error.startswith('bad_response')
    assert f'{MAX_REPLY_BYTES}-byte bound' in decision.llm.error


def test_oversized_body_without_length_is_cut_at_the_bound(catalog, server):
    body = json.dumps(openai_reply(json.dumps({'tools': ['x' * 70] * 20_000}))).encode()
    server.reply({'raw': body, 'no_length': True})
    decision = route(make(catalog, server.url, timeout_s=3))
    assert decision.tools == []
    assert 'byte bound' in decision.llm.error


@pytest.mark.parametrize(
    'raw',
    [
        b'[' * 200_000,  # nesting beyond the JSON decoder's recursion limit
        '{"choices": [{"message": {"content": "land"}}]}'.encode('cp1252') + b'\xff\xfe',
        b'\x00\x01\x02 not json',
    ],
)
def test_undecodable_bodies_degrade(catalog, server, raw):
    server.reply({'raw': raw})
    decision = route(make(catalog, server.url, timeout_s=3))
    assert decision.tools == [] and decision.abstained
    assert decision.llm.error.startswith('bad_response')


def test_utf16_json_body_is_read(catalog, server):
    server.reply({'raw': json.dumps(openai_reply('{"tools": ["land"]}')).encode('utf-16')})
    assert route(make(catalog, server.url, timeout_s=3)).tools == ['land']


def test_dripping_servers_do_not_starve_later_calls(catalog, server):
    # Each reply arrives one byte every 50 ms (about 5 s in all): every read succeeds, so no
    # httpx read timeout fires. More drips than the client's 4 workers, then a normal reply:
    # the abandoned workers must stop at their deadline, or the normal call finds no worker.
    policy = make(catalog, server.url, timeout_s=0.4)
    drip = {'raw': json.dumps(openai_reply('{"tools": ["land"]}')).encode(), 'drip': 0.05}
    for _ in range(6):
        server.reply(dict(drip))
        decision = route(policy)
        assert decision.tools == [] and decision.llm.timeout is True
    server.reply('{"tools": ["land"]}')
    decision = policy.route('land now', 8)  # the same client, after its drips
    assert decision.tools == ['land'], decision.llm


def test_compressed_reply_is_refused(catalog, server):
    server.reply(
        {'raw': json.dumps(openai_reply('{"tools": ["land"]}')).encode(), 'encoding': 'gzip'}
    )
    decision = route(make(catalog, server.url, timeout_s=3))
    assert decision.tools == []
    assert 'compressed' in decision.llm.error
