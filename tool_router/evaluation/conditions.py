"""Scoring the conditions a router attaches to gated tools (the condition benchmark).

One case per line (``benchmarks/data/conditions/README_brief.md``)::

    {"id": "cd_012", "request": "bat<20 -> land", "tool": "land",
     "expect": {"sensor": "battery_status", "field": "battery_pct", "op": "<",
                "threshold": 20, "unit": "%"}, "shape": "symbolic", "writer": "w1"}

``expect`` is the predicate a careful reader expects, or ``"refuse"`` (with ``why``). A case is
scored on what the executor would do with the route: the condition text the router attached
to ``tool`` is read by :func:`~tool_router.common.conditions.parse_condition` with the route's
other tools, the request and the places file, exactly as the executor reads it. Outcomes:

* ``correct`` -- a predicate equal to ``expect``: sensor, field, op, unit, the target point
  of a distance, and the threshold within 1e-6 (the benchmark rounds converted thresholds
  to 2 decimals, so a threshold whose 2-decimal rounding equals ``expect`` is equal too);
* ``correct_refusal`` -- ``expect`` is "refuse" and the executor refuses the condition;
* ``wrong_predicate`` / ``refused`` (a predicate was expected) / ``accepted`` (a refusal was
  expected: the action would wait for something the operator did not ask for);
* ``no_condition`` -- the tool was selected without a condition: it would run **at once**;
* ``tool_missing`` -- the router did not select the tool (nothing runs; a routing miss).

Pure: routing is the caller's (``benchmarks/conditions.py`` routes with the shipped router).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.conditions import HOME, Parsed, Predicate, parse_condition
from tool_router.common.places import Place

Outcome = Literal['correct', 'correct_refusal', 'wrong_predicate', 'refused', 'accepted',
                  'no_condition', 'tool_missing']
GOOD: frozenset[str] = frozenset({'correct', 'correct_refusal'})
TOLERANCE = 1e-6
# units as the benchmark writes them -> the parser's canonical spelling
UNIT_ALIASES = {'C': '°C', 'c': '°C', 'degC': '°C', 'ratio': '', 'none': '', 'None': ''}


class ExpectedPredicate(BaseModel):
    """The predicate a case expects."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    sensor: str
    field: str
    op: Literal['<', '<=', '>', '>=', '==']
    threshold: Union[bool, float, str]
    unit: str | None = None
    target: Union[Literal['home'], tuple[float, float], None] = None


class ConditionCase(BaseModel):
    """One line of a condition benchmark."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    id: str = Field(min_length=1)
    request: str = Field(min_length=1)
    tool: str = Field(min_length=1, description='The one tool the condition gates.')
    expect: Union[Literal['refuse'], ExpectedPredicate]
    why: str = Field('', description='Why the condition must be refused.')
    shape: str = ''
    writer: str = ''


class CaseResult(BaseModel):
    """What the router and the executor's reading made of one case."""

    model_config = ConfigDict(extra='forbid')

    id: str
    shape: str
    request: str
    tool: str
    outcome: Outcome
    expected: str = Field(description='The expected predicate, or "refuse: <why>".')
    got: str = Field('', description='The predicate read, or "refused: <reason>".')
    condition: str = Field('', description='The condition text the router attached.')
    tools: list[str] = Field(default_factory=list, description='Every tool the router chose.')
    mismatch: list[str] = Field(default_factory=list, description='Fields that differ.')

    @property
    def ok(self) -> bool:
        """True for a correct predicate or a correct refusal."""
        return self.outcome in GOOD


def load_cases(path: str | Path) -> list[ConditionCase]:
    """The cases of a JSONL file; ``ValueError`` naming the line when one is malformed."""
    cases = []
    for n, line in enumerate(Path(path).read_text(encoding='utf-8').splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(ConditionCase.model_validate(json.loads(line)))
        except ValueError as exc:
            raise ValueError(f'{path}:{n}: {exc}') from None
    ids = Counter(c.id for c in cases)
    twice = sorted(i for i, k in ids.items() if k > 1)
    if twice:
        raise ValueError(f'{path}: duplicate ids {", ".join(twice)}')
    return cases


def describe_expected(case: ConditionCase) -> str:
    """The expected outcome in words."""
    e = case.expect
    if not isinstance(e, ExpectedPredicate):
        return f'refuse: {case.why}' if case.why else 'refuse'
    where = f' of {e.target}' if e.target is not None else ''
    unit = f' {e.unit}' if e.unit and e.unit not in UNIT_ALIASES else \
        f' {UNIT_ALIASES.get(e.unit or "", "")}'
    return f'{e.sensor}.{e.field}{where} {e.op} {_shown(e.threshold)}{unit}'.rstrip()


def _shown(value: object) -> str:
    return f'{value:g}' if isinstance(value, float) else json.dumps(value)


def _same_threshold(got: float | bool | str, want: float | bool | str) -> bool:
    if isinstance(want, bool) or isinstance(got, bool) or isinstance(want, str) \
            or isinstance(got, str):
        return type(got) is type(want) and got == want
    return abs(float(got) - float(want)) <= TOLERANCE \
        or abs(round(float(got), 2) - float(want)) <= TOLERANCE


def mismatches(expected: ExpectedPredicate, got: Predicate) -> list[str]:
    """The fields of ``got`` that differ from ``expected`` (empty: equal)."""
    out = [name for name in ('sensor', 'field', 'op')
           if getattr(expected, name) != getattr(got, name)]
    if not _same_threshold(got.threshold, expected.threshold):
        out.append('threshold')
    want_unit = UNIT_ALIASES.get(expected.unit or '', expected.unit or '')
    if not isinstance(expected.threshold, (bool, str)) and want_unit != got.unit:
        out.append('unit')
    want_target = HOME if expected.target == 'home' else expected.target
    if (want_target is None) != (got.target is None) or (
            want_target is not None and got.target is not None
            and any(abs(a - b) > TOLERANCE for a, b in zip(want_target, got.target))):
        out.append('target')
    return out


def score_case(case: ConditionCase, tools: Sequence[str], conditions: Mapping[str, str],
               places: Mapping[str, Place] | None = None) -> CaseResult:
    """Score one routed case: ``tools`` and ``conditions`` are the router's answer.

    The condition is read as the executor reads it: with the route's other tools, the places
    file's ``places`` and the request (a pronoun's referent).
    """
    base: dict[str, Any] = {'id': case.id, 'shape': case.shape, 'request': case.request,
                            'tool': case.tool, 'expected': describe_expected(case),
                            'tools': list(tools)}
    if case.tool not in tools:
        return CaseResult(outcome='tool_missing', **base)
    text = conditions.get(case.tool, '')
    if not text:
        return CaseResult(outcome='no_condition', got='runs at once', **base)
    parsed: Parsed = parse_condition(text, [t for t in tools if t != case.tool], places,
                                     case.request)
    base['condition'] = text
    if not isinstance(parsed, Predicate):
        got = f'refused: {parsed.reason}'
        outcome: Outcome = 'correct_refusal' if case.expect == 'refuse' else 'refused'
        return CaseResult(outcome=outcome, got=got, **base)
    got = parsed.describe()
    if not isinstance(case.expect, ExpectedPredicate):
        return CaseResult(outcome='accepted', got=got, **base)
    diff = mismatches(case.expect, parsed)
    return CaseResult(outcome='wrong_predicate' if diff else 'correct', got=got, mismatch=diff,
                      **base)


def summarise(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Accuracy overall and by shape, outcome counts, and the confusion list (every miss)."""
    by_shape: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        by_shape[r.shape].append(r)

    def block(rows: Sequence[CaseResult]) -> dict[str, Any]:
        good = sum(r.ok for r in rows)
        return {'cases': len(rows), 'correct': good,
                'accuracy': round(good / len(rows), 4) if rows else 0.0,
                'outcomes': dict(sorted(Counter(r.outcome for r in rows).items()))}

    return {
        'overall': block(results),
        'by_shape': {s: block(rows) for s, rows in sorted(by_shape.items())},
        'ran_at_once': [r.id for r in results if r.outcome == 'no_condition'],
        'confusion': [r.model_dump() for r in results if not r.ok],
    }


def report_text(summary: Mapping[str, Any]) -> str:
    """The summary as a plain-text table, then the confusion list."""
    o = summary['overall']
    lines = [f'overall  {o["correct"]}/{o["cases"]} = {o["accuracy"]:.3f}  {o["outcomes"]}', '',
             f'{"shape":22s} {"n":>4s} {"acc":>6s}  outcomes']
    for shape, b in summary['by_shape'].items():
        lines.append(f'{shape:22s} {b["cases"]:4d} {b["accuracy"]:6.3f}  {b["outcomes"]}')
    lines += ['', f'ran at once (tool selected without its condition): '
                  f'{len(summary["ran_at_once"])} {summary["ran_at_once"]}', '',
              f'confusion ({len(summary["confusion"])}):']
    for r in summary['confusion']:
        lines.append(f'  {r["id"]} [{r["shape"]}] {r["outcome"]}: {r["request"]!r}')
        lines.append(f'      tool {r["tool"]} condition {r["condition"]!r}; tools {r["tools"]}')
        lines.append(f'      expected {r["expected"]}')
        lines.append(f'      got      {r["got"]}'
                     + (f'  (differs: {", ".join(r["mismatch"])})' if r['mismatch'] else ''))
    return '\n'.join(lines)
