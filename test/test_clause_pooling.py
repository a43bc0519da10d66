"""Single-pass clause pooling (lcr.clause_pooling): spans, pooled vectors, scorer consistency."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tool_router.common.clauses import normalise, split_clauses
from tool_router.common.errors import ConfigError
from tool_router.common.paths import config_path
from tool_router.routing.policies.lcr import LCRParams, LearnedClauseRouter, clause_spans


def test_spans_cover_each_clause_and_a_condition_from_its_connective():
    full = normalise('Take a photo, then when it drops below 20% land now')
    clauses = split_clauses(full)
    resolved = [k for k, c in enumerate(clauses) if c.role == 'condition' and k > 0]
    spans = clause_spans(full, clauses, resolved)
    assert spans is not None and len(spans) == len(clauses) + len(resolved)
    for c, ranges in zip(clauses, spans):
        (start, end), = ranges
        piece = full[start:end]
        assert piece.lower().endswith(c.text.lower())
        if c.role == 'condition':
            assert piece.lower().startswith(c.marker)
    # A pronoun-resolved condition is pooled over its clause and the one before it.
    for extra, k in zip(spans[len(clauses):], resolved):
        assert extra == [spans[k - 1][0], spans[k][0]]


def test_a_clause_that_is_not_in_the_text_gives_no_spans():
    from tool_router.common.clauses import Clause

    assert clause_spans('land now', [Clause(0, 'take off', 'action')], []) is None


def test_a_scorer_fitted_without_pooling_is_refused_with_pooling_on(fake_index):
    with pytest.raises(ConfigError, match='clause_pooling'):
        LearnedClauseRouter(fake_index, LCRParams(clause_pooling=True))


@pytest.fixture(scope='module')
def onnx_encoder():
    """MiniLM on ONNX Runtime (the default backend; token vectors for pooling)."""
    from tool_router.routing.embeddings import SentenceTransformerEncoder

    return SentenceTransformerEncoder('all-MiniLM-L6-v2', 'cpu', backend='onnx')


@pytest.mark.slow
def test_a_scorer_fitted_with_pooling_routes_in_one_pass(onnx_encoder, catalog, tmp_path):
    from tool_router.routing.index import CatalogIndex

    index = CatalogIndex.ephemeral(catalog, onnx_encoder)
    raw = json.loads(config_path('lcr_model.json').read_text())
    model = dict(raw['variants']['lcr'], clause_pooling=True)  # weights reused: a shape test
    path = tmp_path / 'pooled.json'
    path.write_text(json.dumps({'variants': {'lcr': model}}))
    policy = LearnedClauseRouter(index, LCRParams(model_path=str(path), clause_pooling=True))
    inner = index.encoder
    before = inner.passes
    decision = policy.route('take a photo and then when the battery is low return home', 8)
    assert inner.passes - before == 1  # the request and its clauses: one forward pass
    assert decision.tools and len(decision.fragments) >= 3


@pytest.mark.slow
def test_pooled_rows_are_the_sentence_vector_and_unit_clause_vectors(onnx_encoder, encoder):
    with pytest.raises(ConfigError, match='onnx'):
        encoder.encode_spans('land now', [[(0, 4)]])  # the torch backend has no token pooling
    encoder = onnx_encoder
    text = 'take a photo and land'
    rows = encoder.encode_spans(text, [[(0, 12)], [(17, 21)], [(500, 600)]])
    assert rows.shape == (4, encoder.dim)
    assert np.allclose(rows[0], encoder.encode([text])[0], atol=1e-5)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    # A clause's pooled vector is close to the clause embedded alone, not to the other one.
    alone = encoder.encode(['take a photo', 'land'])
    assert rows[1] @ alone[0] > rows[1] @ alone[1]
    assert rows[2] @ alone[1] > rows[2] @ alone[0]
    assert np.allclose(rows[3], rows[0])  # a span past the text falls back to the sentence
