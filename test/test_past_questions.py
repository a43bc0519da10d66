"""A question about what the vehicle did reads no sensor for the event (past_questions.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.clauses import split_clauses
from tool_router.common.paths import config_path
from tool_router.routing.past_questions import drop_past_event_sensors
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(text, state_clause, event_tool):
    event = next(c.index for c in split_clauses(text) if c.index != state_clause)
    return Decision('lcr', ['vehicle_state', event_tool], [0.9, 0.8],
                    clause_index={'vehicle_state': state_clause, event_tool: event})


@pytest.mark.parametrize('text, event_tool', [
    ('did the failsafe RTH fire when we lost the link', 'link_quality'),
    ('did the auto land kick in when the battery hit 15%', 'battery_status'),
    ('did mapping stop when the link dropped?', 'link_quality'),
])
def test_the_past_events_sensor_goes(text, event_tool):
    d, past = drop_past_event_sensors(_decision(text, 0, event_tool), text, CATALOG)
    assert d.tools == ['vehicle_state'] and past is not None and past.tools == (event_tool,)


@pytest.mark.parametrize('text, tools, index', [
    # a condition on what is to come keeps its sensor
    ('did we take off? if the battery is low, land', ['vehicle_state', 'battery_status', 'land'],
     {'vehicle_state': 0, 'battery_status': 1, 'land': 2}),
    # a question about the present
    ('is the link dropping while it maps?', ['vehicle_state', 'link_quality'],
     {'vehicle_state': 0, 'link_quality': 1}),
    # no state answers it
    ('did it go home when the link dropped', ['link_quality', 'return_to_home'],
     {'return_to_home': 0, 'link_quality': 1}),
])
def test_what_keeps_its_sensors(text, tools, index):
    before = Decision('lcr', tools, [0.9 - 0.1 * i for i in range(len(tools))],
                      clause_index=index)
    d, past = drop_past_event_sensors(before, text, CATALOG)
    assert past is None and d.tools == tools
