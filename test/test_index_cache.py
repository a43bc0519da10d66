"""Chroma only when needed: the vector cache, in-memory indexes, HNSW for large catalogs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tool_router.routing.index as index_mod
from fakes import BagOfWordsEncoder
from tool_router.common.catalog import Catalog, load_catalog
from tool_router.routing.config import RouterConfig
from tool_router.common.errors import ConfigError, IndexStoreError
from tool_router.routing.index import CatalogIndex, open_client
from tool_router.common.paths import config_path
from tool_router.routing.router import Router

ENC = BagOfWordsEncoder(['battery', 'land', 'photo', 'wind', 'heat', 'winch', 'lidar'])
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'benchmarks'))


class Factory:
    """Opens a persistent Chroma client and counts how often it was asked to."""

    def __init__(self, path: Path) -> None:
        self.path, self.calls = path, 0

    def __call__(self):
        self.calls += 1
        return open_client(persist_dir=self.path)


def test_second_start_reads_the_cache_without_opening_chroma(tmp_path, catalog):
    first_factory = Factory(tmp_path)
    first = CatalogIndex(catalog, ENC, first_factory, cache_dir=tmp_path)
    assert set(first.state.values()) == {'built'} and first_factory.calls == 1
    assert (tmp_path / 'tool-router-vectors.npz').exists()

    factory = Factory(tmp_path)
    second = CatalogIndex(catalog, ENC, factory, cache_dir=tmp_path)
    assert set(second.state.values()) == {'cached'}
    assert factory.calls == 0  # exact scoring needs no Chroma
    assert np.array_equal(second.tool_vectors, first.tool_vectors)
    assert np.array_equal(second.phrase_vectors, first.phrase_vectors)
    # A query opens Chroma then, and finds the collections built by the first start.
    hits = second.query(second.embed(['land now']), 3)[0]
    assert factory.calls == 1 and set(second.state.values()) == {'reused'}
    assert hits == first.query(first.embed(['land now']), 3)[0]


def test_a_cache_of_another_catalog_is_not_used(tmp_path, catalog):
    CatalogIndex(catalog, ENC, Factory(tmp_path), cache_dir=tmp_path)
    smaller = Catalog(version=1, tools=catalog.tools[:5])
    factory = Factory(tmp_path)
    rebuilt = CatalogIndex(smaller, ENC, factory, cache_dir=tmp_path)
    assert set(rebuilt.state.values()) == {'built'} and factory.calls == 1
    assert len(rebuilt.tool_vectors) == 5
    # ... and the cache now holds the smaller catalog's vectors.
    again = CatalogIndex(smaller, ENC, Factory(tmp_path), cache_dir=tmp_path)
    assert set(again.state.values()) == {'cached'}


def test_a_torn_cache_file_is_ignored(tmp_path, catalog):
    (tmp_path / 'tool-router-vectors.npz').write_bytes(b'not a numpy file')
    index = CatalogIndex(catalog, ENC, Factory(tmp_path), cache_dir=tmp_path)
    assert set(index.state.values()) == {'built'}


def test_in_memory_index_embeds_directly_and_builds_chroma_on_first_query(catalog):
    index = CatalogIndex.ephemeral(catalog, ENC)
    assert set(index.state.values()) == {'embedded'} and not index._collections
    assert np.allclose(index.tool_vectors, ENC.encode([r.text for r in index.tool_records]))
    hits = index.query(index.embed(['battery']), 5, 'phrases')[0]
    assert set(index.state.values()) == {'built'}
    assert len(hits) == 5 and hits[0].distance <= hits[-1].distance


def test_router_second_start_serves_from_the_cache(tmp_path, catalog):
    config = RouterConfig(chroma_path=str(tmp_path))
    Router(config, catalog=catalog, encoder=ENC)
    router = Router(config, catalog=catalog, encoder=ENC)
    assert set(router.index.state.values()) == {'cached'}
    assert router.health()['index_search'] == 'exact'
    assert router.route('battery', 'cdbv2').tools  # a cdb policy opens Chroma when it queries
    assert set(router.index.state.values()) == {'reused'}


def test_an_unusable_directory_after_a_cached_start_falls_back_to_memory(tmp_path, catalog):
    CatalogIndex(catalog, ENC, Factory(tmp_path), cache_dir=tmp_path)
    (tmp_path / 'chroma.sqlite3').write_bytes(b'this is not a database' * 100)
    index = CatalogIndex(catalog, ENC, Factory(tmp_path), cache_dir=tmp_path)
    assert set(index.state.values()) == {'cached'}
    assert index.query(index.embed(['land']), 2)[0]
    assert 'HNSW from memory' in index.health()['warning']


def test_large_catalogs_open_chroma_at_start_for_hnsw(tmp_path, catalog):
    factory = Factory(tmp_path)
    index = CatalogIndex(catalog, ENC, factory, cache_dir=tmp_path, exact_max_records=10,
                         shortlist='hnsw')
    assert not index.exact and factory.calls == 1 and index._collections
    assert index.health()['search'] == 'hnsw-shortlist'


def test_the_centroid_shortlist_needs_no_chroma_and_names_the_nearest_centroids(tmp_path, catalog):
    CatalogIndex(catalog, ENC, Factory(tmp_path), cache_dir=tmp_path)  # build, write the cache
    factory = Factory(tmp_path)
    index = CatalogIndex(catalog, ENC, factory, cache_dir=tmp_path, exact_max_records=10)
    assert not index.exact and factory.calls == 0 and not index._collections
    assert index.health()['search'] == 'centroid-shortlist'
    vectors = index.embed(['land when the battery is low', 'take a photo'])
    listed = index.shortlist(vectors, 3)
    # per vector the 2k = 6 tools whose records' mean direction is nearest, by brute force
    names = list(catalog.names)
    sims = np.zeros((len(vectors), len(names)))
    for j, name in enumerate(names):
        rows = [index.tool_vectors[i] for i, r in enumerate(index.tool_records) if r.tool == name]
        rows += [index.phrase_vectors[i] for i, r in enumerate(index.phrase_records)
                 if r.tool == name]
        mean = np.mean(rows, axis=0)
        sims[:, j] = vectors @ mean / np.linalg.norm(mean)
    sixth = np.sort(sims, axis=1)[:, -6][:, None]  # ties at the sixth place may go either way
    assert {names[j] for j in np.flatnonzero((sims > sixth + 1e-6).any(axis=0))} <= listed
    assert all((sims[:, names.index(t)] >= sixth[:, 0] - 1e-6).any() for t in listed)
    assert 6 <= len(listed) <= 12
    assert factory.calls == 0  # still no Chroma
    with pytest.raises(ConfigError, match='unknown shortlist'):
        CatalogIndex(catalog, ENC, factory, cache_dir=tmp_path, shortlist='ivf')


def test_a_failed_add_names_its_chunk_and_does_not_blame_corruption(tmp_path, monkeypatch):
    import catalog_gen

    path = catalog_gen.write(1500, tmp_path / 'big.yaml', config_path('catalog.yaml'))
    big = load_catalog(path)
    client = open_client()
    limit = index_mod.max_batch_size(client)
    # Chunks larger than the store accepts: Chroma refuses the add.
    monkeypatch.setattr(index_mod, 'EMBED_CHUNK', 10 * limit)
    monkeypatch.setattr(index_mod, 'max_batch_size', lambda _client: 10 * limit)
    with pytest.raises(IndexStoreError) as err:
        CatalogIndex(big, ENC, client, prefix='too-big', progress=None)
    text = str(err.value)
    assert 'adding records 0..' in text and 'corrupt' not in text


@pytest.mark.parametrize('kind', ['hnsw', 'centroid'])
def test_lcr_on_a_shortlist_scores_the_shortlisted_tools_as_exact_scoring_does(
    catalog, monkeypatch, kind
):
    import tool_router.routing.policies.lcr as lcr
    from tool_router.routing.policies.lcr import FeatureExtractor

    monkeypatch.setattr(lcr, 'SHORTLIST_K', 5)  # a shortlist shorter than the 42 tools

    exact = FeatureExtractor(CatalogIndex.ephemeral(catalog, ENC))
    hnsw_index = CatalogIndex.ephemeral(catalog, ENC, exact_max_records=10, shortlist=kind)
    shortlist = FeatureExtractor(hnsw_index)
    assert exact.index.exact and not hnsw_index.exact
    for text in ['land when the battery is low', 'take a photo of the wind turbine']:
        a, b = exact.extract(text), shortlist.extract(text)
        listed = hnsw_index.shortlist(hnsw_index.embed(b.fragments), 5)
        cols = [exact.names.index(n) for n in listed]
        assert cols and len(cols) < len(exact.names)
        # The shortlisted tools' similarities are the exact ones; the others count for nothing.
        assert np.allclose(a.clause_score[:, cols], b.clause_score[:, cols])
        others = np.setdiff1d(np.arange(len(exact.names)), cols)
        assert (b.clause_score[:, others] == -1).all()
