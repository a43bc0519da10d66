"""Autopilot flight-mode switches become the catalog command they amount to (flight_modes.py)."""

import json
from pathlib import Path

import pytest

from tool_router.common.clauses import normalise
from tool_router.routing.flight_modes import COMMAND, rewrite_modes
from tool_router.routing.policies.lcr import VARIANTS, FeatureExtractor

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
