"""A question about the present flight mode is vehicle_state's (routing/mode_questions.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.flight_modes import mode_question
from tool_router.routing.mode_questions import answer_mode_questions
from tool_router.routing.policies.base import Decision

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools, clause_index=None):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index=dict(clause_index or {t: 0 for t in tools}),
                    abstained=not tools)


@pytest.mark.parametrize('text, mode', [
    ('are we in loiter', 'loiter'),
    ('am I in return mode right now?', 'return'),
    ('is the drone still in RTL', 'RTL'),
    ('is it in GUIDED mode', 'GUIDED'),         # a mode no tool serves is still a state
    ('are we in position hold at the moment?', 'position hold'),
    ('is it in LAND', 'LAND'),                  # an everyday word in capitals
])
def test_a_question_about_the_mode_is_read(text, mode):
    assert mode_question(text) == mode


@pytest.mark.parametrize('text', ['is it in land', 'are we in position', 'is it in auto',
                                  'are we in the mission area', 'switch to loiter',
                                  'put it in loiter mode'])
def test_everything_else_is_no_mode_question(text):
    assert mode_question(text) == ''


def test_the_modes_clause_gets_vehicle_state_and_loses_what_it_chose():
    d, fact = answer_mode_questions(_decision(['geofence_monitor']), 'are we in loiter', CATALOG)
    assert d.tools == ['vehicle_state'] and fact is not None
    assert fact.dropped == ('geofence_monitor',) and not d.abstained


def test_an_empty_answer_is_filled():
    d, fact = answer_mode_questions(_decision([]), 'am I in return mode right now?', CATALOG)
    assert d.tools == ['vehicle_state'] and fact is not None and fact.dropped == ()


def test_the_other_clauses_keep_their_tools():
    d, _ = answer_mode_questions(
        _decision(['vehicle_state', 'land'], {'vehicle_state': 0, 'land': 1}),
        'is it in LOITER? then switch to LAND', CATALOG)
    assert d.tools == ['vehicle_state', 'land']


def test_a_request_with_no_mode_question_is_unchanged():
    before = _decision(['geofence_monitor'])
    d, fact = answer_mode_questions(before, 'are we inside the fence', CATALOG)
    assert fact is None and d is before
