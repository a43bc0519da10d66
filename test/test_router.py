"""The in-process router: input checks, policy choice, allowlist on every answer."""

import pytest

from tool_router.common.errors import RequestError
from tool_router.routing.policies.base import Decision
from tool_router.routing.config import config_model
from tool_router.routing.policies.registry import REGISTRY, PolicySpec
from tool_router.routing.router import Router, check_request_id, check_text


@pytest.fixture(scope='module')
def router(fake_router):
    """The hashing encoder's router: input checks and the allowlist gate, not MiniLM."""
    return fake_router


@pytest.mark.parametrize(
    'text, pattern',
    [
        ('', 'empty'),
        ('   \n\t ', 'empty'),
        ('x' * 2001, 'longer than the maximum 2000'),
        (b'\xff\xfe land', 'not valid UTF-8'),
        ('land \udcff', 'unpaired surrogate'),
        (42, 'must be text'),
    ],
)
def test_bad_input_is_a_clear_error(router, text, pattern):
    with pytest.raises(RequestError, match=pattern):
        router.route(text)


def test_exactly_max_length_is_accepted():
    assert check_text('a' * 2000, 2000) == 'a' * 2000
    assert check_text('land'.encode(), 10) == 'land'


@pytest.mark.parametrize('rid, pattern', [
    ('a\nb', 'control'), (' r1', 'surrounding space'), ('r\u200b1', 'invisible'),
    ('x' * 257, 'longer than the maximum 256'), (7, 'must be text'),
])
def test_bad_request_ids_are_refused(rid, pattern):
    with pytest.raises(RequestError, match=pattern):
        check_request_id(rid)


def test_request_ids_callers_choose_are_kept():
    for rid in ('', 'x-0123456789ab', 'my request 1', 'a001', 'x' * 256):
        assert check_request_id(rid) == rid


def test_unknown_policy_names_the_known_ones(router):
    with pytest.raises(RequestError, match='known policies: .*cdbv3'):
        router.route('land', 'cdbv9')


def test_default_policy_and_max_tools(router):
    result = router.route('take off, fly to the tower, take a photo and land', max_tools=2)
    assert result.policy == router.config.policy
    assert len(result.tools) <= 2
    assert result.latency_ms > 0 and result.request_id


def test_a_policy_that_invents_names_is_filtered(router):
    class Rogue:
        name = 'rogue'

        def route(self, text, max_tools):
            return Decision('rogue', ['land', 'launch_missiles', 'land'], [1.0, 1.0, 0.5])

    registry = REGISTRY.with_policies(PolicySpec('rogue', lambda ctx: Rogue()))
    config = config_model(registry)(chroma_ephemeral=True, policy='cdbv3')
    with Router(config, index=router.index) as rogue_router:
        result = rogue_router.route('land now', 'rogue')
    assert result.tools == ['land']
    assert result.dropped == ['launch_missiles'] and result.duplicates == ['land']
    assert result.explanation().dropped == ['launch_missiles']
    assert result.explanation().duplicates == ['land']
