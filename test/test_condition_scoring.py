"""Scoring of the condition benchmark (tool_router.evaluation.conditions), on given routes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tool_router.evaluation.conditions import (ConditionCase, load_cases, report_text,
                                               score_case, summarise)

ROOT = Path(__file__).resolve().parent.parent


def case(expect, tool='land', request='land when the battery drops below 20%', **kw):
    return ConditionCase(id=kw.pop('id', 'c1'), request=request, tool=tool, expect=expect,
                         shape=kw.pop('shape', 'plain'), **kw)


BATTERY = {'sensor': 'battery_status', 'field': 'battery_pct', 'op': '<', 'threshold': 20,
           'unit': '%'}


@pytest.mark.parametrize('tools, conditions, expect, outcome', [
    (['land'], {'land': 'when the battery drops below 20%'}, BATTERY, 'correct'),
    (['land'], {'land': 'when the battery drops below 25%'}, BATTERY, 'wrong_predicate'),
    (['land'], {'land': 'if it gets too windy'}, BATTERY, 'refused'),
    (['land'], {}, BATTERY, 'no_condition'),
    (['rgb_camera'], {}, BATTERY, 'tool_missing'),
    (['land'], {'land': 'unless the battery is above 30%'}, 'refuse', 'correct_refusal'),
    (['land'], {'land': 'when the battery drops below 20%'}, 'refuse', 'accepted'),
])
def test_outcomes(tools, conditions, expect, outcome):
    assert score_case(case(expect), tools, conditions).outcome == outcome


def test_thresholds_rounded_to_two_decimals_and_units_as_the_brief_writes_them():
    knots = {'sensor': 'wind_estimate', 'field': 'wind_mps', 'op': '>', 'threshold': 10.29,
             'unit': 'm/s'}
    got = score_case(case(knots, request='rtl if wind > 20 knots'), ['land'],
                     {'land': 'if wind > 20 knots'})
    assert got.outcome == 'correct'  # 10.28888 m/s
    temp = {'sensor': 'motor_status', 'field': 'esc_temp_c', 'op': '>', 'threshold': 80,
            'unit': 'C'}
    assert score_case(case(temp), ['land'], {'land': 'if the motors go over 80'}).ok
    home = {'sensor': 'gps_position', 'field': 'distance_m', 'op': '<=', 'threshold': 10,
            'unit': 'm', 'target': 'home'}
    assert score_case(case(home), ['land'], {'land': 'once within 10 m of home'}).ok
    elsewhere = score_case(case(home), ['land'], {'land': 'once within 10 m of 47.0, 8.0'})
    assert elsewhere.outcome == 'wrong_predicate' and elsewhere.mismatch == ['target']


def test_summary_by_shape_and_confusion_list():
    results = [score_case(case(BATTERY, id='a', shape='plain'), ['land'],
                          {'land': 'when the battery drops below 20%'}),
               score_case(case(BATTERY, id='b', shape='symbolic'), ['land'], {})]
    summary = summarise(results)
    assert summary['overall'] == {'cases': 2, 'correct': 1, 'accuracy': 0.5,
                                  'outcomes': {'correct': 1, 'no_condition': 1}}
    assert summary['by_shape']['symbolic']['accuracy'] == 0.0
    assert summary['ran_at_once'] == ['b'] and [c['id'] for c in summary['confusion']] == ['b']
    text = report_text(summary)
    assert 'symbolic' in text and 'b [symbolic] no_condition' in text


def test_load_cases_names_the_bad_line(tmp_path):
    path = tmp_path / 'c.jsonl'
    good = json.dumps({'id': 'x', 'request': 'r', 'tool': 'land', 'expect': 'refuse'})
    path.write_text(good + '\n' + json.dumps({'id': 'y', 'request': 'r', 'tool': 'land',
                                               'expect': {'sensor': 's'}}) + '\n')
    with pytest.raises(ValueError, match=r'c.jsonl:2'):
        load_cases(path)
    path.write_text(good + '\n' + good + '\n')
    with pytest.raises(ValueError, match='duplicate ids x'):
        load_cases(path)


def test_the_dev_file_is_well_formed():
    cases = load_cases(ROOT / 'benchmarks/data/conditions/dev.jsonl')
    assert len(cases) == 220 and len({c.shape for c in cases}) == 21


@pytest.mark.slow  # loads MiniLM in a child process
def test_the_runner_writes_its_json(tmp_path):
    data = tmp_path / 'few.jsonl'
    rows = [{'id': 'a', 'request': 'bat<20 -> land', 'tool': 'land', 'shape': 'symbolic',
             'expect': BATTERY},
            {'id': 'b', 'request': 'land when you reach the red barn', 'tool': 'land',
             'shape': 'arrival_named', 'expect': 'refuse', 'why': 'unknown place'}]
    data.write_text(''.join(json.dumps(r) + '\n' for r in rows))
    out = tmp_path / 'out.json'
    proc = subprocess.run([sys.executable, str(ROOT / 'benchmarks' / 'conditions.py'),
                           '--dataset', str(data), '--out', str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary['overall']['cases'] == 2 and summary['policy'] == 'lcr'
    assert [c['id'] for c in summary['cases']] == ['a', 'b']
    assert 'overall  ' in proc.stdout and 'arrival_named' in proc.stdout
