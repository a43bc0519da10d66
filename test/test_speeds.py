"""An explicit speed in an order adds set_speed, whatever the policy (routing/speeds.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision
from tool_router.routing.speeds import add_explicit_speeds, explicit_speed

CATALOG = load_catalog(config_path('catalog.yaml'))


@pytest.mark.parametrize('text, speed', [
    ('fly to the gate at 36 km/h', '36 km/h'),
    ('patrol the fence at 3 knots', '3 knots'),
    ('head home @ 8 m/s', '8 m/s'),
    ('survey the field with a speed of 6 mps', '6 mps'),
    ('go to the dock at five metres per second', '5 metres per second'),
    ('cruise over at 10 miles an hour', '10 miles 1 hour'),
    ('fly at approximately 1.5 m/s', '1.5 m/s'),
    ('fly to 30 m', ''),
    ('come home at 15% battery', ''),
    ('go to the gate slowly', ''),
    ('fly north 3 m', ''),
    # a speed standing alone after a comma
    ('orbit the mast at 20 m radius, 4 m/s', '4 m/s'),
    ('fly to 47.1, 8.5', ''),  # coordinates
    ('waypoint 3 done, 20 m/s ground speed', ''),  # a reading
])
def test_the_speed_an_order_names(text, speed):
    assert explicit_speed(text) == speed


def _decision(tools, clause_index=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=clause_index or {t: 0 for t in tools})


def test_an_order_with_a_speed_gets_set_speed_with_its_clauses_score():
    d, added = add_explicit_speeds(_decision(['follow_target']), 'follow the car at 10 m/s',
                                   CATALOG)
    assert d.tools == ['follow_target', 'set_speed'] and d.scores[-1] == pytest.approx(0.9)
    assert added is not None and added.speed == '10 m/s' and d.clause_index['set_speed'] == 0
    assert d.evidence['set_speed'][0].source == 'rule'
    # the second clause names the speed: set_speed takes that clause's best score
    d, _ = add_explicit_speeds(
        _decision(['takeoff', 'goto_waypoint'], {'takeoff': 0, 'goto_waypoint': 1}),
        'take off to 20 m and fly to the gate at 36 km/h', CATALOG)
    assert d.tools[-1] == 'set_speed' and d.scores[-1] == pytest.approx(0.8)
    assert d.clause_index['set_speed'] == 1


@pytest.mark.parametrize('text, tools', [
    ('if the wind exceeds 30 km/h, land', ['land', 'wind_estimate']),  # a condition's speed
    ('land when the ground speed drops below 5 km/h', ['land', 'velocity_estimate']),
    ('are we flying at 10 m/s?', ['velocity_estimate']),  # a question
    ('announce on the speaker that we fly at 5 m/s', ['speaker_broadcast']),  # a message
    ("don't fly faster than 5 m/s, go to the gate", ['goto_waypoint']),  # no "at"
    ('cruise at 25 kph', ['set_speed']),  # already there
    ('go to the gate at 3 m/s', []),  # the policy answered nothing: nothing to add to
])
def test_no_speed_to_fly_at_adds_nothing(text, tools):
    d, added = add_explicit_speeds(_decision(tools), text, CATALOG)
    assert added is None and d.tools == tools


def test_set_speed_is_gated_as_its_clause_is():
    """A gated move changes speed when it starts, not at once (no gated action runs early)."""
    text = 'if the battery drops below 30%, come home at 8 m/s'
    gated = Decision('lcr', ['battery_status', 'return_to_home'], [0.99, 0.94],
                     clause_index={'battery_status': 0, 'return_to_home': 1},
                     conditions={'return_to_home': 'if the battery drops below 30%'})
    d, _ = add_explicit_speeds(gated, text, CATALOG)
    assert d.conditions['set_speed'] == 'if the battery drops below 30%'
    # a policy that gave the clause's tools no condition: the splitter's own condition gates it
    plain = Decision('cdbv3', ['return_to_home'], [0.9], clause_index={'return_to_home': 1})
    d, _ = add_explicit_speeds(plain, text, CATALOG)
    assert d.conditions['set_speed'] == 'if the battery drops below 30%'
    d, _ = add_explicit_speeds(_decision(['follow_target']), 'follow the car at 10 m/s', CATALOG)
    assert 'set_speed' not in d.conditions
