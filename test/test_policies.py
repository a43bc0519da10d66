"""The CDB policies on hand-made cases (bag-of-words encoder) and on the real model."""

import pytest

from fakes import BagOfWordsEncoder
from tool_router.common.catalog import Catalog, Tool
from tool_router.routing.index import CatalogIndex
from tool_router.routing.policies.cdb import (CDBv1, CDBv1Params, CDBv2, CDBv2Params, CDBv3,
                                             CDBv3Params)

VOCAB = ['battery', 'charge', 'land', 'ground', 'photo', 'picture', 'heat', 'wind', 'gust']


def tool(name, kind, summary, description):
    return Tool(
        name=name,
        kind=kind,
        risk='none' if kind == 'sensor' else 'motion',
        summary=summary,
        description=description,
    )


@pytest.fixture(scope='module')
def small_index():
    catalog = Catalog(
        version=1,
        tools=(
            tool('battery_status', 'sensor', 'battery charge', 'battery'),
            tool('land', 'actuator', 'land ground', 'land'),
            tool('rgb_camera', 'sensor', 'photo picture', 'photo'),
            tool('thermal_camera', 'sensor', 'heat picture', 'heat'),
            tool('wind_estimate', 'sensor', 'wind gust', 'wind'),
        ),
    )
    return CatalogIndex.ephemeral(catalog, BagOfWordsEncoder(VOCAB))


def test_cdbv1_keeps_everything_within_the_threshold(small_index):
    strict = CDBv1(small_index, CDBv1Params(max_distance=0.5)).route('battery charge', 8)
    assert strict.tools == ['battery_status']
    loose = CDBv1(small_index, CDBv1Params(max_distance=2.0)).route('battery charge', 8)
    assert len(loose.tools) == 5  # orthogonal tools sit at exactly distance 2
    nothing = CDBv1(small_index, CDBv1Params(max_distance=0.1)).route('pizza', 8)
    assert nothing.tools == [] and nothing.abstained


def test_cdbv2_is_relative_to_the_nearest(small_index):
    # 'picture' is equally close to both cameras; 'thermal picture' prefers thermal.
    both = CDBv2(small_index, CDBv2Params(margin=0.05)).route('picture', 8)
    assert set(both.tools) == {'rgb_camera', 'thermal_camera'}
    one = CDBv2(small_index, CDBv2Params(margin=0.05)).route('thermal heat', 8)
    assert one.tools == ['thermal_camera']
    # The policy does not cut at max_tools: the router does, and reports the cut.
    assert CDBv2(small_index, CDBv2Params(margin=0.05)).route('picture', 1).tools == both.tools


def test_cdbv3_aggregates_clauses_that_a_single_query_misses(small_index):
    text = 'check the battery, then land on the ground and take a photo'
    single = CDBv2(small_index, CDBv2Params(margin=0.05)).route(text, 8)
    clause = CDBv3(small_index, CDBv3Params(sim_floor=0.4, lexical_weight=0.0, gap=0.5)).route(
        text, 8
    )
    assert set(clause.tools) == {'battery_status', 'land', 'rgb_camera'}
    assert len(single.tools) < 3
    assert clause.fragments[0] == text and len(clause.fragments) == 4
    assert all(t in clause.evidence for t in clause.tools)


def test_cdbv3_gap_truncates_and_the_bound_is_left_to_the_router(small_index):
    text = 'battery battery battery charge, and wind'
    tight = CDBv3(small_index, CDBv3Params(sim_floor=0.2, lexical_weight=0.0, gap=0.1)).route(
        text, 8
    )
    assert tight.tools == ['battery_status']
    wide = CDBv3(small_index, CDBv3Params(sim_floor=0.2, lexical_weight=0.0, gap=1.0)).route(
        text, 8
    )
    assert wide.tools[:2] == ['battery_status', 'wind_estimate']
    unbounded = CDBv3(small_index, CDBv3Params(sim_floor=-1, gap=1.0)).route(text, 1)
    assert len(unbounded.tools) > 1 and unbounded.capped(1).tools == unbounded.tools[:1]


def test_cdbv3_lexical_support_breaks_ties(small_index):
    params = dict(sim_floor=0.2, gap=0.05)
    plain = CDBv3(small_index, CDBv3Params(lexical_weight=0.0, **params)).route('picture', 8)
    assert set(plain.tools) == {'rgb_camera', 'thermal_camera'}
    lexical = CDBv3(small_index, CDBv3Params(lexical_weight=1.0, **params)).route(
        'thermal picture', 8
    )
    assert lexical.tools[0] == 'thermal_camera'
    assert any(e.source == 'lexical' for e in lexical.evidence['thermal_camera'])


@pytest.mark.parametrize('policy', ['cdbv1', 'cdbv2', 'cdbv3'])
def test_real_model_routes_a_direct_request(router, policy):
    result = router.route('land the drone right here', policy)
    assert 'land' in result.tools or policy == 'cdbv1'
    assert result.policy == policy
    assert all(t in router.catalog for t in result.tools)
    assert len(result.scores) == len(result.tools)


def test_real_model_cdbv3_finds_both_tools_of_a_conditional(router):
    result = router.route('monitor the battery and land when it drops below 25%', 'cdbv3')
    assert 'battery_status' in result.tools


def test_tools_of_a_policy_that_reads_no_clauses_get_their_clause_and_condition(catalog):
    from tool_router.routing.policies.base import Decision, Evidence, claim_clauses
    text = 'take off, and land if the battery drops below 20%'
    d = Decision('cdbv3', ['takeoff', 'land', 'battery_status'], [0.9, 0.8, 0.7],
                 evidence={'land': [Evidence('retrieval', 'land', 'tool record', 0.8)]})
    out = claim_clauses(d, text, catalog, d.tools)
    assert out.conditions == {'land': 'if the battery drops below 20%'}  # by its evidence
    assert out.clause_index == {'takeoff': 0, 'land': 1, 'battery_status': 2}  # by its words
    # an actuator no clause claims, in a request with conditions, is never left ungated
    lone = claim_clauses(Decision('llm', ['emergency_stop'], [0.9]),
                         'if a person is within 3 m, do it', catalog, ['emergency_stop'])
    assert lone.conditions == {'emergency_stop': 'if a person is within 3 m'}
    # nothing to do without a condition in the request, or when the policy placed every tool
    plain = Decision('cdbv3', ['land'], [0.9])
    assert claim_clauses(plain, 'land now', catalog, ['land']) is plain
    placed = Decision('lcr', ['land'], [0.9], clause_index={'land': 0})
    assert claim_clauses(placed, 'land if the wind exceeds 9 m/s', catalog, ['land']) is placed
