"""Autopilot flight-mode switches become the catalog command they amount to (flight_modes.py)."""

import json
from pathlib import Path

import pytest

from tool_router.common.clauses import normalise
from tool_router.routing.flight_modes import COMMAND, rewrite_modes, unmapped_mode_switch
from tool_router.routing.policies.base import Decision
from tool_router.routing.policies.lcr import VARIANTS, FeatureExtractor
from tool_router.routing.unserved_modes import drop_unserved_modes

ROOT = Path(__file__).resolve().parents[1]
# the tool each plain command names (ANNOTATION.md, "Autopilot flight-mode words")
TOOL_OF = {
    'hold position': 'hold_position',
    'return to home': 'return_to_home',
    'land': 'land',
    'start the mission': 'execute_mission',
}


@pytest.mark.parametrize(
    ('text', 'expected'),
    [
        ('set the flight mode to POSHOLD', 'hold position'),
        ('change mode to LOITER', 'hold position'),
        ('switch to poshold', 'hold position'),
        ('go into loiter mode', 'hold position'),
        ('put it in position hold', 'hold position'),
        ('set mode brake', 'hold position'),
        ('go to HOLD mode', 'hold position'),
        ('mode RTL', 'return to home'),
        ('flight mode: rtl', 'return to home'),
        ('switch to return mode, we are done', 'return to home, we are done'),
        ('Switch to SMART_RTL now', 'return to home now'),
        ('switch flight mode to LAND', 'land'),
        ('Set LAND mode at current position.', 'land at current position.'),
        ('set mode AUTO', 'start the mission'),
        ('switch the drone to LOITER and take a photo', 'hold position and take a photo'),
        ('If telemetry drops out, switch to LOITER.', 'If telemetry drops out, hold position.'),
        ('ESCs overheating -> mode LOITER', 'ESCs overheating -> hold position'),
    ],
)
def test_a_switch_to_a_served_mode_becomes_its_command(text, expected):
    assert rewrite_modes(text) == expected


@pytest.mark.parametrize(
    'text',
    [
        # modes that serve no catalog function stay as written, for the scope decision
        'switch to guided mode',
        'Change flight mode to ALT_HOLD please.',
        'switch to alt hold mode',
        'altitude hold mode on',
        'set STABILIZE and give me the sticks',
        # questions about the present mode are vehicle_state requests
        'Is the vehicle in AUTO?',
        'is it still in loiter mode?',
        'which mode is it in, loiter?',
        # a mode before the arrow of a typed condition is the state it waits for
        'mode RTL -> stop recording',
        'mode RTL --> stop recording',  # the splitter's arrows, all of them
        'mode RTL ⇒ stop recording',
        # the names as everyday words
        'go to land',
        'hold the camera steady',
        'land now',
        'return home',
        'start the mission',
        'AUTO, start mission',
    ],
)
def test_everything_else_is_left_as_written(text):
    assert rewrite_modes(text) == text


def test_every_command_is_one_of_the_four_tools():
    assert set(COMMAND.values()) == set(TOOL_OF)


def test_every_rewritten_dev_request_is_annotated_with_the_commands_tool():
    # The development splits only: the rule was written against the annotation rules and
    # checked on dev; a test split is never used to shape it.
    rewritten = 0
    for name in ('benchmarks/data/v2/dev.jsonl', 'benchmarks/data/dev.jsonl'):
        for line in (ROOT / name).read_text().splitlines():
            row = json.loads(line)
            text = normalise(row['request'])
            new = rewrite_modes(text)
            if new == text:
                continue
            rewritten += 1
            named = {tool for command, tool in TOOL_OF.items() if command in new.lower()}
            assert named & set(row['tools']), (row['id'], text, new, row['tools'])
    assert rewritten >= 20  # the v2 dev split has two dozen mode switches


def test_lcr_reads_the_rewritten_text_and_its_ablation_does_not(fake_index):
    x = FeatureExtractor(fake_index)
    full, *_ = x.segment('set the flight mode to POSHOLD', VARIANTS['lcr'])
    assert full == 'hold position'
    plain, *_ = x.segment('set the flight mode to POSHOLD', VARIANTS['lcr_no_spelling'])
    assert plain == 'set the flight mode to POSHOLD'


@pytest.mark.parametrize('text, name', [
    ('switch to GUIDED mode now', 'GUIDED'), ('go into acro mode', 'acro'),
    ('mode guided pls', 'guided'), ('ALT_HOLD please', 'ALT_HOLD'),
    ('switch to offboard', 'offboard'), ('STABILIZE it', 'STABILIZE'), ('go SPORT', 'SPORT'),
    ('manual mode pls', 'manual'), ('switch to ALTCTL', 'ALTCTL'), ('set mode DRIFT', 'DRIFT'),
    ('switch to altitude hold', 'altitude hold'),
    ('SPORT MODE!!! NOW!!!', 'SPORT'),  # shouted, but beside "mode"
])
def test_a_switch_to_a_mode_no_tool_serves_is_named(text, name):
    assert unmapped_mode_switch(text) == name


@pytest.mark.parametrize('text', [
    'stabilize the camera', 'drift downstream', 'take manual control', 'sport the new camera',
    'switch from GUIDED to RTL',  # the mode it goes to is served
    'switch to loiter', 'hold altitude',
    'THROW THE LIFE RING NOW', 'DRIFT LEFT A BIT',  # shouted words, not modes' names
])
def test_everyday_words_and_served_modes_are_not_unserved_switches(text):
    assert unmapped_mode_switch(text) == ''


def test_a_switch_from_one_mode_to_another_is_the_mode_it_goes_to():
    assert rewrite_modes('switch from auto to loiter') == 'hold position'
    assert rewrite_modes('change from GUIDED to RTL mode').endswith('return to home')
    assert unmapped_mode_switch('change from GUIDED to RTL mode') == ''


def _decision(tools, clause_index):
    return Decision('lcr', list(tools), [0.9] * len(tools), clause_index=clause_index)


@pytest.mark.parametrize('text, tools, index, kept', [
    ('ALT_HOLD please', ['altitude_sensor'], {'altitude_sensor': 0}, []),
    ('switch to ALTCTL', ['set_altitude'], {'set_altitude': -1}, []),
    ('set GUIDED and take off to 10 m', ['takeoff', 'goto_waypoint'],
     {'takeoff': 1, 'goto_waypoint': 0}, ['takeoff']),
    ('are we in GUIDED rn?', ['vehicle_state'], {'vehicle_state': 0}, ['vehicle_state']),
    ('switch to loiter', ['hold_position'], {'hold_position': 0}, ['hold_position']),
])
def test_the_rule_drops_only_the_switch_clauses_tools(text, tools, index, kept):
    d, drops = drop_unserved_modes(_decision(tools, index), text)
    assert d.tools == kept
    assert bool(drops) == (kept != tools)
    if drops:
        assert 'no catalog tool serves' in d.note
