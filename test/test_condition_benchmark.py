"""The condition benchmark end to end: route every request with the shipped router (MiniLM),
hand the selection to the executor pipeline as the router node would, and check that the
gated action never runs at once: it carries its condition and is armed on a watch or refused
with the reason in its trace. Slow (MiniLM, through the ``router`` fixture).

Every file of ``benchmarks/data/conditions/*.jsonl`` is covered, so a held-out file dropped
there is checked the same way.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tool_router.common.places import load_places
from tool_router.evaluation.conditions import load_cases, score_case, summarise
from tool_router.executor.config import load_executor_config
from tool_router.executor.dispatch import DispatchResult
from tool_router.executor.permissions import PermissionPolicy, load_permissions
from tool_router.executor.pipeline import ExecutionPipeline, Selection
from tool_router.executor.sampling import SensorReadError
from tool_router.executor.traces import ConfirmationOutcome
from tool_router.executor.watches import WatchManager

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / 'benchmarks' / 'data' / 'conditions').glob('*.jsonl'))
CASES = [(f.stem, c) for f in FILES for c in load_cases(f)]


class Executor:
    """The pipeline with a recording dispatcher, an approving confirmer and real watches."""

    def __init__(self, catalog):
        self.calls: list[tuple[str, str]] = []
        self.clock = lambda: 50_000.0  # 13:53:20 UTC: clock times later today can be armed
        config = load_executor_config()
        rules = load_permissions(config.resolved_permissions(), catalog)
        self.watches = WatchManager(self, lambda w: None, lambda r: None, max_watches=10_000,
                                    clock=self.clock)
        self.pipe = ExecutionPipeline(catalog, PermissionPolicy(rules, catalog), config
                                      .parsed_bindings(), self, self, watches=self.watches,
                                      clock=self.clock, places=load_places())

    def dispatch(self, tool, binding, request_id, request_text, timeout_s):
        self.calls.append((request_id, tool))
        return DispatchResult(True, f'{tool}: done', '')

    def confirm(self, requests):  # approve everything: only the condition may hold a tool back
        return {r.tool: ConfirmationOutcome(outcome='approved', operator_name='op')
                for r in requests}

    def read(self, sensor):  # never sampled here: nothing is ticked
        raise SensorReadError(f'{sensor}: not sampled in this test')


def selection(case_id, result):
    """The router node's selection: its choices in clause order, each with its condition."""
    from tool_router.common.choice import in_clause_order
    return Selection(request_id=case_id, request_text=result.text,
                     choices=in_clause_order(result.choices), policy=result.policy)


@pytest.fixture(scope='module')
def routed(router):
    return {case.id: router.route(case.request) for _, case in CASES}


def test_the_benchmark_files_are_there():
    assert FILES and len(CASES) >= 220


def test_no_gated_action_is_ever_dispatched_without_its_condition(routed, catalog):
    executor = Executor(catalog)
    selected = 0
    for _, case in CASES:
        sel = selection(case.id, routed[case.id])
        if case.tool not in sel.tools:
            continue  # not selected: nothing runs (a routing miss, scored by the benchmark)
        selected += 1
        condition = sel.choices[sel.tools.index(case.tool)].condition
        assert condition, f'{case.id}: {case.tool} selected without its condition'
        record = executor.pipe.process(sel)
        trace = next(t for t in record.tools if t.tool == case.tool)
        assert (case.id, case.tool) not in executor.calls, f'{case.id}: ran at once'
        assert trace.condition == condition
        if trace.outcome == 'armed':
            assert trace.watch_id in {w.watch_id for w in executor.watches.snapshot()}
        else:
            assert (trace.outcome, trace.failure_mode) == ('not_armed', 'condition_unreadable'), \
                (case.id, trace.outcome, trace.message)
            assert trace.message.startswith('condition not executable: ') and \
                len(trace.message) > len('condition not executable: ') + 10
    assert selected >= 0.9 * len(CASES)


def test_condition_benchmark_dev_accuracy(routed):
    cases = [c for name, c in CASES if name == 'dev']
    places = load_places()
    results = []
    for case in cases:
        result = routed[case.id]
        conditions = result.decision.conditions if result.decision else {}
        results.append(score_case(case, result.tools, conditions, places))
    summary = summarise(results)
    assert summary['ran_at_once'] == []
    assert summary['overall']['accuracy'] >= 0.9, summary['confusion']
