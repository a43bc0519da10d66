""""Kill the floodlight" switches the light off, never the motors (routing/payload_kills.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.payload_kills import payload_kills
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, clause_index):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=dict(clause_index))


@pytest.mark.parametrize('text, tools, index, expected', [
    ('kill the floodlight and land on the dock', ['precision_landing', 'spotlight',
     'emergency_stop'], {'precision_landing': 1, 'spotlight': 0, 'emergency_stop': 0},
     ['precision_landing', 'spotlight']),
    ('kill the music', ['emergency_stop'], {'emergency_stop': 0}, ['speaker_broadcast']),
    ('cut the siren', ['emergency_stop'], {'emergency_stop': 0}, ['speaker_broadcast']),
    ('shut off the video feed', ['emergency_stop'], {'emergency_stop': 0}, ['video_recorder']),
    # "cut speed" slows down: the speed's own tool, no motor cut
    ('if a motor runs hot, cut speed and come home', ['motor_status', 'return_to_home',
     'emergency_stop'], {'motor_status': 0, 'return_to_home': 2, 'emergency_stop': 1},
     ['motor_status', 'return_to_home', 'set_speed']),
])
def test_a_payload_switched_off_is_no_emergency_stop(text, tools, index, expected):
    d, fact = payload_kills(_decision(tools, index), text, CATALOG)
    assert fact is not None and d.tools == expected and not d.abstained
    assert 'emergency_stop dropped' in d.note


@pytest.mark.parametrize('text', ['kill the motors', 'kill it', 'cut the engines',
                                  'kill switch now', 'kill the motors and the lights'])
def test_the_vehicles_own_kill_stays_an_emergency_stop(text):
    d, fact = payload_kills(_decision(['emergency_stop'], {'emergency_stop': 0}), text, CATALOG)
    assert fact is None and d.tools == ['emergency_stop']


def test_only_the_clause_that_chose_the_stop_is_read():
    # the stop was chosen for the second clause, which names the motors
    d, fact = payload_kills(_decision(['spotlight', 'emergency_stop'],
                                      {'spotlight': 0, 'emergency_stop': 1}),
                            'kill the lights, then kill the motors', CATALOG)
    assert fact is None and d.tools == ['spotlight', 'emergency_stop']
