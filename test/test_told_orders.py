"""An order told to people is the speaker's message, not the vehicle's (routing/told_orders.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision
from tool_router.routing.told_orders import told_orders_are_the_message

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, clause_index):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=clause_index)


@pytest.mark.parametrize('text, tools, index, kept', [
    ('lights on and tell them to stay put', ['spotlight', 'speaker_broadcast', 'hold_position'],
     {'spotlight': 0, 'speaker_broadcast': 1, 'hold_position': 1},
     ['spotlight', 'speaker_broadcast']),
    ('fly to the gate and tell the crowd to move back',
     ['goto_waypoint', 'speaker_broadcast', 'land'],
     {'goto_waypoint': 0, 'speaker_broadcast': 1, 'land': 1},
     ['goto_waypoint', 'speaker_broadcast']),
    ('spotlight on, find the kid, broadcast stay there',
     ['spotlight', 'object_detector', 'speaker_broadcast', 'hold_position'],
     {'spotlight': 0, 'object_detector': 1, 'speaker_broadcast': 2, 'hold_position': 2},
     ['spotlight', 'object_detector', 'speaker_broadcast']),
])
def test_the_told_order_loses_its_tool(text, tools, index, kept):
    d, drop = told_orders_are_the_message(_decision(tools, index), text, CATALOG)
    assert d.tools == kept and drop is not None


@pytest.mark.parametrize('text, tools, index', [
    # an order of the vehicle's own beside the message keeps its tool
    ('light on, tell them to stay put, and hover', ['spotlight', 'speaker_broadcast',
                                                    'hold_position'],
     {'spotlight': 0, 'speaker_broadcast': 1, 'hold_position': 2}),
    # told to the vehicle: its order
    ('tell the drone to hover right there and announce it', ['hold_position',
                                                              'speaker_broadcast'],
     {'hold_position': 0, 'speaker_broadcast': 0}),
    # no speaker to tell them with: the answer is left as it is
    ('tell them to stay put', ['hold_position', 'spotlight'],
     {'hold_position': 0, 'spotlight': 0}),
    ('broadcast the video live to the office', ['video_recorder', 'speaker_broadcast'],
     {'video_recorder': 0, 'speaker_broadcast': 0}),
])
def test_what_keeps_its_tools(text, tools, index):
    d, drop = told_orders_are_the_message(_decision(tools, index), text, CATALOG)
    assert d.tools == tools and drop is None
