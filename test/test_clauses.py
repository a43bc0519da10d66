"""Clause splitting: the CDBv3 query set and the clause records."""

import pytest

from tool_router.clauses import fragments, split_clauses


def test_full_prompt_first_then_clauses():
    text = 'monitor the battery and land when it drops below 25%'
    assert fragments(text) == [text, 'monitor the battery', 'land', 'it drops below 25%']


@pytest.mark.parametrize(
    'text, expected',
    [
        (
            'take off, fly to the water tower and take a thermal picture',
            ['take off', 'fly to the water tower', 'take a thermal picture'],
        ),
        ('arm the motors; then take off', ['arm the motors', 'take off']),
        (
            'hover until the battery hits 30% then come back',
            ['hover', 'the battery hits 30%', 'come back'],
        ),
        ('take a photo before landing', ['take a photo', 'landing']),
        (
            'Land immediately if the link drops below 20 percent.',
            ['Land immediately', 'the link drops below 20 percent'],
        ),
        ('climb to 1,000 ft', ['climb to 1,000 ft']),
        ('as soon as the wind picks up, return home', ['the wind picks up', 'return home']),
    ],
)
def test_split_points(text, expected):
    assert [c.text for c in split_clauses(text)] == expected


def test_roles_conditions_and_gating():
    clauses = split_clauses('If the wind exceeds 12 m/s, return home')
    assert [c.role for c in clauses] == ['condition', 'action']
    assert clauses[0].marker == 'if'
    assert clauses[1].condition == 'the wind exceeds 12 m/s'
    trailing = split_clauses('land if the battery is below 20%')
    assert trailing[0].condition == 'the battery is below 20%'


def test_negation_is_marked():
    clauses = split_clauses("don't land yet, just hover")
    assert [(c.text, c.negated) for c in clauses] == [("don't land yet", True), ('hover', False)]


def test_empty_and_duplicate_fragments_are_dropped():
    assert fragments('land, land,, and   land') == ['land, land,, and land', 'land']
    assert fragments('   ') == []
    assert fragments('...;;,') == ['...;;,']
