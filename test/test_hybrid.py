"""The `hybrid` policy: local first, LLM when uncertain, within a deadline, degrading to local."""

from __future__ import annotations

import re
import time

import pytest

from llm_server import ModelServer, closed_port
from tool_router.routing.config import RouterConfig
from tool_router.routing.llm.settings import HybridParams, LLMParams
from tool_router.evaluation.fitting.gate import fit_gate
from tool_router.evaluation.metrics import composite
from tool_router.common.explanation import GateSignals
from tool_router.routing.policies.hybrid import gate_signals, uncertain
from tool_router.routing.policies.base import Decision
from tool_router.routing.router import Router

COMPOUND = (
    'take off, fly to the water tower, take a thermal picture and land when the battery is low'
)


@pytest.fixture(scope='module')
def index(fake_index):
    """The hashing encoder's index: these tests are about the LLM fallback, not MiniLM."""
    return fake_index


@pytest.fixture(scope='module')
def router(fake_router):
    return fake_router


@pytest.fixture
def server():
    s = ModelServer()
    yield s
    s.close()


def make_router(index, url='', allow_remote=True, **hybrid):
    hybrid.setdefault('gate', 'always')
    hybrid.setdefault('local_policy', 'cdbv3')  # the tests compare against cdbv3's answers
    llm = LLMParams(url=url, allow_remote=allow_remote, breaker_failures=2, breaker_cooldown_s=60)
    return Router(
        RouterConfig(chroma_ephemeral=True, llm=llm, hybrid=HybridParams(**hybrid)), index=index
    )


def listed_tools(system_prompt):
    return re.findall(r'^- ([a-z_0-9]+) \(', system_prompt, re.MULTILINE)


def test_disabled_is_exactly_the_local_result(router, index, server):
    local = router.route(COMPOUND, 'cdbv3')
    for r in (make_router(index), make_router(index, server.url, allow_remote=False)):
        result = r.route(COMPOUND, 'hybrid')
        assert (result.tools, result.scores) == (local.tools, local.scores)
        assert result.fallback_used is False
        assert 'disabled' in result.fallback_reason
        assert result.decision.llm is None  # no call: not counted as an LLM reply
        assert 'disabled' in result.decision.hybrid.llm_skipped
    assert server.requests == []


def test_refine_sends_only_the_candidates_and_llm_picks_among_them(index, server):
    r = make_router(index, server.url, mode='refine', refine_top_k=6)
    local = r.policy('cdbv3').route(COMPOUND, 8).capped(8)  # as the router serves it
    shortlist = r.policy('hybrid').shortlist(local)
    pick = shortlist[-1]
    server.reply(f'{{"tools": ["{pick}", "summon_pizza"]}}')
    result = r.route(COMPOUND, 'hybrid')
    sent = listed_tools(server.requests[0]['body']['messages'][0]['content'])
    assert sent == shortlist and len(sent) == max(6, len(local.tools)) < 42
    assert result.tools == [pick]
    assert result.fallback_used is True and 'LLM consulted' in result.fallback_reason
    facts = result.decision.llm
    assert facts.invented == ['summon_pizza'] and facts.ignored == ['summon_pizza']
    assert result.decision.hybrid.llm_mode == 'refine'


def test_refine_ignores_catalog_tools_outside_the_shortlist(index, server):
    r = make_router(index, server.url, mode='refine', refine_top_k=3)
    local = r.policy('cdbv3').route('land now', 8)
    outside = next(t for t in r.catalog.names if t not in r.policy('hybrid').shortlist(local))
    server.reply(f'{{"tools": ["land", "{outside}"]}}')
    result = r.route('land now', 'hybrid')
    assert outside not in result.tools and 'land' in result.tools
    facts = result.decision.llm
    assert facts.ignored == [outside] and facts.invented == []  # in the catalog


def test_full_mode_sends_the_whole_catalog(index, server):
    r = make_router(index, server.url, mode='full')
    server.reply('{"tools": ["takeoff", "goto_waypoint", "thermal_camera"]}')
    result = r.route(COMPOUND, 'hybrid')
    assert len(listed_tools(server.requests[0]['body']['messages'][0]['content'])) == len(
        r.catalog
    )
    assert result.tools == ['takeoff', 'goto_waypoint', 'thermal_camera']


def test_union_merge_keeps_confident_local_tools(index, server):
    r = make_router(index, server.url, mode='full', merge='union', keep_local_score=0.99)
    local = r.policy('cdbv3').route(COMPOUND, 8)
    server.reply('{"tools": ["video_recorder"]}')
    result = r.route(COMPOUND, 'hybrid')
    assert result.tools[0] == 'video_recorder' and local.tools[0] in result.tools


@pytest.mark.parametrize(
    'step, reason',
    [
        ({'content': 'sorry, I cannot'}, 'unparseable'),
        ({'content': ''}, 'empty'),
        ({'status': 500, 'body': '{}'}, 'http'),
    ],
)
def test_llm_failure_degrades_to_local(router, index, server, step, reason):
    local = router.route(COMPOUND, 'cdbv3')
    server.reply(step)
    result = make_router(index, server.url).route(COMPOUND, 'hybrid')
    assert result.tools == local.tools
    assert result.fallback_used is False and reason in result.fallback_reason
    assert len(server.requests) == 1


def test_connection_refused_and_circuit_open_degrade(router, index):
    r = make_router(index, f'http://127.0.0.1:{closed_port()}')
    local = router.route(COMPOUND, 'cdbv3')
    reasons = [r.route(COMPOUND, 'hybrid').fallback_reason for _ in range(3)]
    assert 'connect' in reasons[0] and 'circuit open' in reasons[2]
    assert r.route(COMPOUND, 'hybrid').tools == local.tools


def test_deadline_is_honoured_with_a_slow_server(router, index, server):
    """What happened, not how fast: the call was given at most the deadline, it timed out, and
    the late answer was ignored (the timing itself: benchmarks/deadline.py)."""
    local = router.route(COMPOUND, 'cdbv3')
    late = next(t for t in router.catalog.names if t not in local.tools)
    server.reply({'content': f'{{"tools": ["{late}"]}}', 'delay': 6.0})
    # a deadline far above local routing even on a busy machine: the LLM is always asked
    r = make_router(index, server.url, deadline_ms=1500, mode='full')  # any answer would count
    result = r.route(COMPOUND, 'hybrid')
    assert result.tools == local.tools and late not in result.tools
    assert result.fallback_used is False and 'timeout' in result.fallback_reason
    facts = result.decision.llm
    assert facts.sent is True and facts.timeout is True
    budget_s = float(re.search(r'([0-9.]+) s', facts.error).group(1))
    assert 0 < budget_s <= 1.5  # the LLM got what was left of the 1.5 s, not timeout_s


def test_time_before_the_policy_counts_against_the_deadline(index, server):
    """A request that waited before hybrid ran (for a worker, for the policy's first build)
    gets only what is left of its deadline: here too little, so the LLM is not asked."""
    server.reply('{"tools": ["land"]}')
    r = make_router(index, server.url, deadline_ms=400, min_llm_budget_ms=50)
    result = r.route(COMPOUND, 'hybrid', started=time.perf_counter() - 0.39)
    assert server.requests == [] and 'deadline' in result.fallback_reason
    assert result.decision.llm is None and result.decision.hybrid.llm_skipped
    fresh = r.route(COMPOUND, 'hybrid')  # arrived now: the same router asks the LLM
    assert len(server.requests) == 1 and fresh.decision.llm.sent


def test_llm_call_ends_at_the_absolute_deadline(index, server):
    """The consultation gets an instant, not a duration: the budget it reports is what was
    left of the router's deadline when the call began, never the configured timeout_s."""
    server.reply({'content': '{"tools": ["payload_release"]}', 'delay': 6.0})
    r = make_router(index, server.url, deadline_ms=2000, mode='full')
    result = r.route(COMPOUND, 'hybrid', started=time.perf_counter() - 1.0)
    facts = result.decision.llm
    assert facts.sent and facts.timeout and 'payload_release' not in result.tools
    budget_s = float(re.search(r'([0-9.]+) s', facts.error).group(1))
    assert 0 < budget_s <= 1.0  # at most the 2 s minus the 1 s already spent


def test_no_time_left_skips_the_llm(index, server):
    r = make_router(index, server.url, deadline_ms=1, min_llm_budget_ms=50)
    result = r.route(COMPOUND, 'hybrid')
    assert server.requests == [] and 'deadline' in result.fallback_reason


def test_confident_local_decision_makes_no_call(index, server):
    r = make_router(
        index,
        server.url,
        gate='fitted',
        gate_margin=0.0,
        gate_min_tools=43,
        gate_on_abstain=False,
        gate_confidence=0.0,
    )
    result = r.route('land the drone', 'hybrid')
    assert server.requests == []
    assert result.fallback_used is False and 'not needed' in result.fallback_reason


def test_local_policy_is_looked_up_by_name(index, server):
    r = make_router(index, server.url, local_policy='cdbv2', gate='never')
    assert r.route(COMPOUND, 'hybrid').tools == r.route(COMPOUND, 'cdbv2').tools
    with pytest.raises(Exception, match='not a local policy'):
        make_router(index, server.url, local_policy='llm').route(COMPOUND, 'hybrid')


# --- the gate ------------------------------------------------------------------------------


def test_gate_signals_margin():
    d = Decision('x', ['a', 'b'], [1.0, 0.6], candidates=[('a', 1.0), ('b', 0.6), ('c', 0.5)])
    s = gate_signals(d)
    assert s.margin == pytest.approx(0.1) and s.n_tools == 2 and not s.abstained
    p = HybridParams(gate_margin=0.2, gate_min_tools=5, gate_confidence=0.0)
    assert uncertain(s, p) == (True, 'margin 0.100 < 0.2')
    assert not uncertain(s, p.model_copy(update={'gate_margin': 0.05}))[0]
    unsure = s.model_copy(update={'confidence': 0.3})
    assert uncertain(unsure, p.model_copy(update={'gate_margin': 0.0, 'gate_confidence': 0.5}))[0]


def test_fit_gate_targets_the_wrong_answers():
    rows = [
        (GateSignals(confidence=1.0, margin=m, n_tools=1, abstained=False), loss)
        for m, loss in [
            (0.05, 1.0),
            (0.1, 0.8),
            (0.5, 0.0),
            (0.6, 0.0),
            (0.7, 0.1),
            (0.8, 0.0),
            (0.9, 0.0),
            (0.95, 0.0),
            (0.97, 0.0),
            (0.99, 0.0),
        ]
    ]
    got = fit_gate(rows, 0.2)
    assert got['call_rate'] == 0.2 and got['wrong_caught'] == 2
    assert 0.1 < got['gate_margin'] <= 0.5


def test_fit_gate_agrees_with_the_gate_and_scales():
    """The fit evaluates the gate on arrays: its figures must be those of ``uncertain``."""
    import random

    rng = random.Random(3)
    rows = [(GateSignals(confidence=rng.random(), margin=rng.random(), n_tools=rng.randint(0, 9),
                         abstained=rng.random() < 0.1), rng.choice([0.0, 0.0, 0.3, 1.0]))
            for _ in range(3000)]  # 3,000 distinct values: the quantile grid
    got = fit_gate(rows, 0.25)
    p = HybridParams(gate_confidence=got['gate_confidence'], gate_margin=got['gate_margin'],
                     gate_min_tools=got['gate_min_tools'], gate_on_abstain=got['gate_on_abstain'])
    fired = [(s, loss) for s, loss in rows if uncertain(s, p)[0]]
    assert 0 < got['call_rate'] <= 0.25
    assert got['call_rate'] == pytest.approx(len(fired) / len(rows), abs=1e-4)
    assert got['wrong_caught'] == sum(loss > 0 for _, loss in fired)
    caught = sum(loss for _, loss in fired) / sum(loss for _, loss in rows)
    assert got['loss_caught'] == pytest.approx(caught, abs=1e-4)


def test_composite():  # composite(truth, predicted)
    assert composite(['a'], ['a']) == 1.0
    assert composite([], []) == 1.0 and composite([], ['a']) == 0.0
    assert composite(['a'], ['a', 'b']) == pytest.approx(0.5 + 0.125)
    assert composite(['a', 'b'], ['a']) == pytest.approx(0.25 + 0.25)
