"""An arrival asked about is read where the vehicle is (routing/arrival_questions.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.arrival_questions import answer_arrival_questions, arrival_asked
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))


@pytest.mark.parametrize('clause, sensor', [
    ('are we at the gate already', 'gps_position'),
    ('has it reached the waypoint', 'gps_position'),
    ('did it get to the pump house yet', 'gps_position'),
    ('waypoint reached?', 'gps_position'),
    ('have we arrived at waypoint 3', 'gps_position'),
    ('did it reach 50 metres', 'altitude_sensor'),
    ('is it at 50 m yet', 'altitude_sensor'),
    ('did we reach the new height', 'altitude_sensor'),
    # the return's end and the mission's progress are the state's
    ('has it made it home', ''),
    ('did it make it back home yet', ''),
    ('which waypoint are we at', ''),
    ('are we at 50% battery', ''),  # a level
    ('is it in loiter', ''),
])
def test_what_an_arrival_question_asks(clause, sensor):
    assert arrival_asked(clause) == sensor


def _decision(tools):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index={t: 0 for t in tools})


@pytest.mark.parametrize('text, tools, answer', [
    ('are we at the gate already?', ['vehicle_state'], ['gps_position']),
    ('did it reach 50 metres?', ['vehicle_state'], ['altitude_sensor']),
    ('did we reach the new height?', ['altitude_sensor', 'vehicle_state'], ['altitude_sensor']),
    # not asked, or no state to replace: left as it is
    ('fly to the gate and tell me when we are at the gate', ['goto_waypoint', 'vehicle_state'],
     ['goto_waypoint', 'vehicle_state']),
    ('are we at the gate already?', ['gps_position'], ['gps_position']),
    ('has it made it home?', ['vehicle_state'], ['vehicle_state']),
])
def test_the_state_gives_way_to_where_the_vehicle_is(text, tools, answer):
    d, _ = answer_arrival_questions(_decision(tools), text, CATALOG)
    assert d.tools == answer
