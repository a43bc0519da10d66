""""Is the light on? If not, turn it on": the order's "it" (routing/pronoun_orders.py)."""
from __future__ import annotations

import pytest

from tool_router.common.catalog import load_catalog
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import Decision
from tool_router.routing.pronoun_orders import add_pronoun_orders

CATALOG = load_catalog(config_path('catalog.yaml'))


def _decision(tools):
    return Decision('lcr', list(tools), [0.9 - 0.1 * i for i in range(len(tools))],
                    clause_index={t: 0 for t in tools})


@pytest.mark.parametrize('text, tool', [
    ('is the light on? if not, turn it on', 'spotlight'),
    ('is it recording? if not, switch it on', 'video_recorder'),
    ('is the siren still going? turn it off please', 'speaker_broadcast'),
    ('is the mapping running? then switch it off', 'area_mapping'),
    ('searchlight still lit? ok turn it off', 'spotlight'),
])
def test_the_payload_the_question_named_is_the_orders_it(text, tool):
    d, facts = add_pronoun_orders(_decision(['vehicle_state']), text, CATALOG)
    assert facts is not None and facts.tool == tool
    assert d.tools == ['vehicle_state', tool] and len(d.scores) == 2
    assert d.evidence[tool][0].source == 'rule'
    assert d.clause_index[tool] > 0  # the order's clause, not the question's


@pytest.mark.parametrize('text', [
    'turn it on',  # no question before it names anything
    'is the drone on? turn it off',  # the question names no payload that switches
    'are the lights and the recording on? turn them off',  # two: which one is "it"
    'is the light on? take a photo',  # no pronoun order
    "is the light on? don't turn it off",  # a negated order
    'turn it off? is the light on',  # the order comes first
])
def test_nothing_is_added_where_it_cannot_be_told(text):
    d, facts = add_pronoun_orders(_decision(['vehicle_state']), text, CATALOG)
    assert facts is None and d.tools == ['vehicle_state']


def test_a_payload_already_chosen_is_not_added_twice():
    d, facts = add_pronoun_orders(_decision(['vehicle_state', 'spotlight']),
                                  'is the light on? if not, turn it on', CATALOG)
    assert facts is None and d.tools == ['vehicle_state', 'spotlight']
