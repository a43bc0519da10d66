"""The question probe: a second opinion on requests the question rules read as neither a
question nor a polite order (routing/question_probe.py, fitting/questions.py).

Fast tests use made-up vectors and a fake probe callable; the slow one checks that the shipped
probe reads the shipped encoder and answers a question the rules miss.
"""
import json
from pathlib import Path

import numpy as np
import pytest

from tool_router.common.errors import ConfigError
from tool_router.evaluation.fitting.guard import (normalise_request, reporting_requests,
                                                  reporting_split_files)
from tool_router.evaluation.fitting.questions import (ProbeRow, choose_threshold, fit_probe,
                                                      probe_rows)
from tool_router.routing.policies.base import Decision
from tool_router.routing.question_probe import QuestionProbe, load_probe
from tool_router.routing.questions import answer_questions

ROOT = Path(__file__).resolve().parent.parent


def _probe(threshold=0.9, weights_id='enc@1'):
    return QuestionProbe(np.array([2.0, -2.0]), 0.0, threshold, weights_id, {'rows': 2})


def test_the_probability_is_a_logistic_of_the_unit_vector():
    probe = _probe()
    assert probe.probability(np.array([3.0, 0.0])) == pytest.approx(1 / (1 + np.exp(-2.0)))
    assert probe.probability(np.array([0.0, 1.0])) == pytest.approx(1 / (1 + np.exp(2.0)))
    with pytest.raises(ValueError, match='dimensions'):
        probe.probability(np.zeros(3))


def test_the_file_round_trips_and_bad_files_say_why(tmp_path):
    path = tmp_path / 'probe.json'
    _probe().save(path)
    back = load_probe(path)
    assert (back.threshold, back.weights_id, back.fit) == (0.9, 'enc@1', {'rows': 2})
    assert np.allclose(back.weights, [2.0, -2.0])
    raw = json.loads(path.read_text())
    for broken, why in (({**raw, 'format': 'x'}, 'not a question probe'),
                        ({**raw, 'threshold': 0.0}, 'out of range'),
                        ({**raw, 'weights': []}, 'out of range'),
                        ({k: v for k, v in raw.items() if k != 'bias'}, 'bias')):
        path.write_text(json.dumps(broken))
        with pytest.raises(ConfigError, match=why):
            load_probe(path)
    with pytest.raises(ConfigError, match='question probe'):
        load_probe(tmp_path / 'missing.json')


def test_it_reads_only_the_encoder_it_was_fitted_on():
    class Enc:
        weights_id = 'enc@1'

    assert _probe().reads(Enc())
    Enc.weights_id = 'enc@2'
    assert not _probe().reads(Enc())
    assert not _probe(weights_id='').reads(Enc())


def _decision(tools):
    return Decision('test', list(tools), [0.9] * len(tools))


def test_a_request_the_rules_miss_is_a_question_when_the_probe_says_so(catalog):
    asked = []

    def probe(p):
        return lambda: asked.append(p) or p

    text = 'takeoff went alright i hope'  # no rule reads it as a question
    kept = answer_questions(_decision(['takeoff']), text, catalog, probe(0.5), 0.9)
    assert kept.decision.tools == ['takeoff'] and not kept.drops
    out = answer_questions(_decision(['takeoff']), text, catalog, probe(0.95), 0.9)
    assert out.decision.tools == ['vehicle_state']
    assert 'question probe 0.950 >= 0.900' in out.drops[0].reason
    assert asked == [0.5, 0.95]


def test_the_probe_is_not_asked_where_the_rules_decided(catalog):
    def never():
        raise AssertionError('the probe was asked')

    # a question by the rules, a polite order, a request without an actuator
    assert answer_questions(_decision(['spotlight']), 'is the spotlight on?', catalog,
                            never, 0.5).decision.tools == ['vehicle_state']
    assert answer_questions(_decision(['land']), 'could you land', catalog,
                            never, 0.5).decision.tools == ['land']
    assert answer_questions(_decision(['battery_status']), 'battery', catalog,
                            never, 0.5).decision.tools == ['battery_status']


def test_an_emergency_stop_is_never_dropped_on_the_probe_alone(catalog):
    out = answer_questions(_decision(['emergency_stop', 'spotlight']), 'estop and lights gone',
                           catalog, lambda: 0.99, 0.9)
    assert 'emergency_stop' in out.decision.tools
    assert 'spotlight' not in out.decision.tools


def test_the_threshold_is_the_lowest_at_which_no_order_reads_as_a_question():
    y = np.array([1, 1, 1, 0, 0, 0])
    p = np.array([0.99, 0.95, 0.5, 0.2, 0.86, 0.1])
    assert choose_threshold(p, y) == 0.87
    assert choose_threshold(np.array([0.999, 0.999]), np.array([1, 0])) == 1.0


def test_fitting_on_separable_vectors_reads_questions_and_no_order():
    rng = np.random.default_rng(0)
    rows, vecs = [], []
    for k in range(200):
        q = k % 2 == 0
        rows.append(ProbeRow(str(k), f'r{k}', q, f'w{k % 10}', 'v2'))
        sign = 1.0 if q else -1.0
        vecs.append(np.r_[sign + 0.1 * rng.standard_normal(), rng.standard_normal(3)])
    probe = fit_probe(rows, np.array(vecs), 'enc@1', log=lambda _: None)
    assert probe.fit['cv_orders_read_as_questions'] == 0
    assert probe.fit['cv_questions_read'] > 90
    assert probe.probability(np.array([1.0, 0, 0, 0])) > probe.threshold
    assert probe.probability(np.array([-1.0, 0, 0, 0])) < 0.5


def test_the_rows_are_dev_only_and_labelled_by_the_truth(catalog, tmp_path):
    dev = tmp_path / 'dev.jsonl'
    dev.write_text('\n'.join(json.dumps(r) for r in [
        {'id': 'a', 'level': 'direct', 'request': 'is it armed yet', 'tools': ['vehicle_state'],
         'style': 'question', 'writer': 'w1'},
        {'id': 'b', 'level': 'direct', 'request': 'land here', 'tools': ['land'],
         'style': 'imperative', 'writer': 'w1'},
        {'id': 'c', 'level': 'direct', 'request': 'battery', 'tools': ['battery_status'],
         'style': 'terse', 'writer': 'w2'},
        {'id': 'd', 'level': 'out_of_scope', 'request': 'what is the weather in paris',
         'tools': [], 'style': 'question', 'writer': 'w2'}]) + '\n')
    questions = tmp_path / 'q.jsonl'
    questions.write_text(json.dumps({'id': 'q1', 'level': 'direct', 'request': 'winch status',
                                     'tools': ['vehicle_state'], 'writer': 'quest',
                                     'kind': 'state_question'}) + '\n')
    rows = probe_rows(dev, questions, catalog)
    assert [(r.id, r.question) for r in rows] == [('a', True), ('b', False), ('q1', True)]


@pytest.mark.parametrize('name', ['dev_questions.jsonl', 'dev_terse_questions.jsonl'])
def test_the_dev_question_files_hold_no_test_request(name):
    known = reporting_requests(reporting_split_files())
    path = ROOT / 'benchmarks/data/questions' / name
    shared = [json.loads(line)['id'] for line in path.read_text().splitlines()
              if normalise_request(json.loads(line)['request']) in known]
    assert shared == []


def test_the_fake_encoders_router_runs_without_the_probe(fake_router):
    """The shipped probe names the shipped encoder: under the fake one it is off."""
    assert fake_router._question_probe(fake_router.config) is None
    assert 'land' in fake_router.route('land now').tools
    assert fake_router.health()['question_probe'].startswith('off (no probe file, or fitted')


def test_a_named_probe_file_that_cannot_be_read_stops_the_router(fake_index, tmp_path):
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    bad = tmp_path / 'probe.json'
    bad.write_text('{}')
    with pytest.raises(ConfigError, match='not a question probe'):
        Router(load_router_config(overrides={'chroma_ephemeral': True,
                                             'question_probe': str(bad)}), index=fake_index)


@pytest.mark.slow
def test_the_shipped_probe_reads_the_shipped_encoder(router):
    probe = router._question_probe(router.config)
    assert probe is not None and 0.8 <= probe.threshold <= 1.0
    assert router.health()['question_probe'] == f'on (threshold {probe.threshold:.2f})'
    assert probe.fit['cv_orders_read_as_questions'] == 0
    # a question no rule reads (its "is it on" is a later clause without "?", after a topic
    # without a determiner), answered by the sensor (probe 0.979 on the fourteenth refit's
    # encoder); plain orders still act ("the spotlight, is it lit", the thirteenth refit's
    # example, is read by the topic rule since stop 44)
    result = router.route('light, is it on')
    assert 'spotlight' not in result.tools and 'vehicle_state' in result.tools
    assert 'question probe' in result.questions[0].reason
    for order in ('take off', 'land now', 'return home', 'drop the package', 'winch down 3 m'):
        assert not router.route(order).questions, order


def test_fit_questions_without_out_or_force_refuses_and_writes_nothing():
    import subprocess
    import sys

    before = (ROOT / 'config/question_probe.json').read_bytes()
    done = subprocess.run([sys.executable, '-m', 'tool_router.cli', 'fit', 'questions'],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert 'no --out given' in done.stderr and '--force' in done.stderr
    assert (ROOT / 'config/question_probe.json').read_bytes() == before


@pytest.mark.slow
def test_the_latency_benchmark_runs_at_smoke_size(tmp_path):
    """benchmarks/question_probe_latency.py: both columns, a ratio, no timing asserted."""
    import subprocess
    import sys

    out = tmp_path / 'latency.json'
    done = subprocess.run([sys.executable, 'benchmarks/question_probe_latency.py', '-n', '30',
                           '--out', str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(out.read_text())
    assert got['n'] == 30 and got['p50_ratio_on_off'] > 0
    assert set(got['probe on']) == {'p50', 'p90', 'p99'} == set(got['probe off'])
