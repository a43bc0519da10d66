"""A clause about autopilot parameters selects nothing, in every policy (routing/parameters.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.parameters import drop_parameter_tools, names_parameter
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, clause_index=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=clause_index if clause_index is not None
                    else {t: 0 for t in tools},
                    conditions={t: '' for t in tools})


@pytest.mark.parametrize('text, named', [
    ('show all battery parameters', True),
    ('what are the GPS params', True),
    ('get param LAND_SPEED', True),
    ("what's RTL_ALT set to", True),
    ('set BATT_LOW_VOLT to 14.2', True),
    ('switch to SMART_RTL', False),  # a flight mode, not a parameter
    ('go to ALT_HOLD mode', False),
    ('run RETURN_TO_HOME', False),  # a catalog tool's name in capitals
    ('what is the battery level', False),
    ('fly to waypoint WP_3', False),  # a place: a parameter id ends in a word
    ('set ARMING_CHECK to 0', True),
])
def test_what_names_a_parameter(text, named):
    assert names_parameter(text, CATALOG) is named


@pytest.mark.parametrize('text, tool', [
    ('show all battery parameters', 'battery_status'),
    ('get param LAND_SPEED', 'land'),
    ('read the compass parameters', 'compass_heading'),
])
def test_a_one_clause_parameter_request_is_answered_empty_with_the_reason(text, tool):
    d, drops = drop_parameter_tools(_decision([tool], {tool: -1}), text, CATALOG)
    assert d.tools == [] and d.scores == [] and d.abstained
    assert drops and drops[0].tools == (tool,)
    assert 'autopilot parameters' in d.note and tool not in d.clause_index


def test_only_the_parameter_clause_loses_its_tools():
    d, drops = drop_parameter_tools(
        _decision(['takeoff', 'battery_status'], {'takeoff': 0, 'battery_status': 1}),
        'take off and then show me the battery parameters', CATALOG)
    assert d.tools == ['takeoff'] and d.scores == [pytest.approx(0.9)] and not d.abstained
    assert [x.tools for x in drops] == [('battery_status',)]


@pytest.mark.parametrize('text, tools', [
    ('what is the battery level', ['battery_status']),
    ('switch to SMART_RTL', ['return_to_home']),
    ('take off and land', ['takeoff', 'land']),
])
def test_requests_without_parameters_keep_their_tools(text, tools):
    d, drops = drop_parameter_tools(_decision(tools), text, CATALOG)
    assert d.tools == tools and drops == []


class _Fixed:
    """A policy that answers the same tools for every request (the rules are the point)."""

    def __init__(self, tools):
        self.name = 'fixed_' + '_'.join(tools)
        self.tools = tools

    def route(self, text, max_tools):
        return Decision(self.name, list(self.tools), [0.9] * len(self.tools),
                        clause_index={t: 0 for t in self.tools})


def test_the_router_applies_both_rules_to_every_policy(fake_router):
    from tool_router.routing.config import config_model
    from tool_router.routing.policies.registry import REGISTRY, PolicySpec
    from tool_router.routing.router import Router

    registry = REGISTRY.with_policies(
        PolicySpec('fixed_land', lambda ctx: _Fixed(['land'])),
        PolicySpec('fixed_detector', lambda ctx: _Fixed(['object_detector'])))
    config = config_model(registry)(chroma_ephemeral=True)
    with Router(config, index=fake_router.index) as router:
        result = router.route('get param LAND_SPEED', 'fixed_land')
        assert result.tools == [] and 'autopilot parameters' in result.explanation().note
        assert router.route('land now', 'fixed_land').tools == ['land']
        result = router.route('keep heading north until you find a white van', 'fixed_detector')
        assert sorted(result.tools) == ['goto_waypoint', 'object_detector']
        [move] = [c for c in result.choices if c.tool == 'goto_waypoint']
        assert move.condition == '' and move.evidence[0].source == 'rule'
        assert router.route('hover until you see the car', 'fixed_detector').tools == [
            'object_detector']
