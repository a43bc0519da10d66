"""A flight to a place named like a landing spot is a flight (routing/landing_places.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.landing_places import flight_to_a_landing_place, one_landing
from fakes import rule_decision

CATALOG = load_catalog(config_path('catalog.yaml'))


@pytest.mark.parametrize('text, index, expected', [
    ('goto Dock', {'precision_landing': 0}, ['goto_waypoint']),
    ('fly to Dock and snap a picture', {'precision_landing': 0, 'rgb_camera': 1},
     ['rgb_camera', 'goto_waypoint']),
    # the policy chose the flight too: the landing goes
    ('head to the charging pad', {'precision_landing': 0, 'goto_waypoint': 0},
     ['goto_waypoint']),
])
def test_a_flight_to_a_landing_place_is_a_flight(text, index, expected):
    d, fact = flight_to_a_landing_place(rule_decision(index), text, CATALOG)
    assert fact is not None and d.tools == expected and not d.abstained
    assert 'precision_landing dropped' in d.note


@pytest.mark.parametrize('text, index', [
    ('goto PAD-1, precland, disarm', {'goto_waypoint': 0, 'precision_landing': 0,
                                      'disarm_motors': 2}),  # a landing in its own words
    ('fly to the dock and land on it', {'precision_landing': 0}),
    ('dock at the charger', {'precision_landing': 0}),  # no flight
    ('put my drone down on the charging pad', {'precision_landing': 0}),
])
def test_a_landing_asked_for_stays(text, index):
    d, fact = flight_to_a_landing_place(rule_decision(index), text, CATALOG)
    assert fact is None and d.tools == list(index)


@pytest.mark.parametrize('text, index, kept', [
    # a vehicle lands once: the landing the policy scored higher stays (rule_decision's scores
    # fall in the order given)
    ('Fly to the rooftop pad, land on it, and disarm.',
     {'goto_waypoint': 0, 'precision_landing': 1, 'land': 1, 'disarm_motors': 2},
     ['goto_waypoint', 'precision_landing', 'disarm_motors']),
    ('lnad it on the gravel pad', {'land': 0, 'precision_landing': 0}, ['land']),
    # the clause names the precise landing: it stays whatever the scores
    ('within 5m of the launch point -> precision land',
     {'gps_position': 0, 'land': 1, 'precision_landing': 1},
     ['gps_position', 'precision_landing']),
])
def test_a_clause_lands_once(text, index, kept):
    d, fact = one_landing(rule_decision(index), text, CATALOG)
    assert fact is not None and d.tools == kept


def test_two_landings_in_two_clauses_stay():
    index = {'precision_landing': 0, 'land': 2, 'takeoff': 1}
    d, fact = one_landing(rule_decision(index), 'land on the pad, take off, land', CATALOG)
    assert fact is None and d.tools == list(index)
