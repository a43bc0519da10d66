"""A move straight up or down is an altitude change (routing/vertical_moves.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.vertical_moves import vertical_move_is_altitude
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))


@pytest.mark.parametrize('text', ['Move up 1 meter', 'fly down 3 m', 'go up by another 5 ft now'])
def test_a_vertical_move_is_set_altitude_alone(text):
    d, fact = vertical_move_is_altitude(rule_decision({'set_altitude': 0, 'goto_waypoint': 0}),
                                        text, CATALOG)
    assert fact is not None and d.tools == ['set_altitude'] and 'goto_waypoint dropped' in d.note


@pytest.mark.parametrize('text, index', [
    # a move across in the same clause, a destination, another clause's goto, a negation
    ('go up 2 m to the north', {'set_altitude': 0, 'goto_waypoint': 0}),
    ('fly up to the roof', {'set_altitude': 0, 'goto_waypoint': 0}),
    ('go up 3 m, fly 5 m forward', {'set_altitude': 0, 'goto_waypoint': 1}),
    ("don't move up 2 m", {'set_altitude': 0, 'goto_waypoint': 0}),
])
def test_other_moves_stay(text, index):
    d, fact = vertical_move_is_altitude(rule_decision(index), text, CATALOG)
    assert fact is None and d.tools == list(index)
