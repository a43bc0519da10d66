"""benchmarks/scale.py and benchmarks/clause_pooling.py at smoke sizes (no timing asserts)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def run(args: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_scale_smoke_reports_every_size(tmp_path):
    out = tmp_path / 'scale.json'
    proc = run(['benchmarks/scale.py', '--smoke', '--json', str(out)])
    figures = json.loads(out.read_text())
    rows = figures['sizes']
    assert [r['tools'] for r in rows] == [42, 120]
    together = figures['together']['sizes']
    assert set(together) == {'42', '120'} and together['42']['over_first_p50'] == 1.0
    assert rows[1]['records'] > rows[0]['records']
    for r in rows:
        assert set(r['index_state'].values()) == {'embedded'}  # in memory, no Chroma to start
        for key in ('exact_p50_ms', 'exact_p99_ms', 'hnsw_p50_ms', 'floor_p50_ms', 'rss_mb',
                    'peak_rss_mb', 'exact_over_42', 'hnsw_selections_differ', 'centroid_p50_ms',
                    'centroid_selections_differ', 'centroid_over_42'):
            assert r[key] == r[key], key  # reported, not NaN
    assert '| 120 (' in proc.stdout


def test_clause_pooling_smoke_fits_both_and_times_one_pass(tmp_path):
    out = tmp_path / 'pooling.json'
    model = tmp_path / 'pooled.json'
    run(['benchmarks/clause_pooling.py', '--smoke', '--json', str(out), '--model-out',
         str(model)])
    figures = json.loads(out.read_text())
    assert figures['n_fit'] == 60 and figures['n_timed'] == 8
    for label in ('fragments', 'pooled'):
        assert 0 < figures[f'{label}_cv_macro_composite'] <= 1
        assert figures[f'{label}_passes_per_request'] == 1.0  # one forward call per request
    assert json.loads(model.read_text())['variants']['lcr']['clause_pooling'] is True
