"""The Chroma index: HNSW settings, reuse by content hash, no duplicates, corrupt directories."""

import pytest

from fakes import BagOfWordsEncoder
from tool_router.common.catalog import Catalog
from tool_router.routing.config import RouterConfig
from tool_router.common.errors import IndexStoreError
from tool_router.routing.index import HNSW_CONFIG, CatalogIndex, open_client
from tool_router.routing.router import Router

ENC = BagOfWordsEncoder(['battery', 'land', 'photo', 'wind', 'heat'])


def test_paper_hnsw_settings(tmp_path, catalog):
    index = CatalogIndex(catalog, ENC, open_client(persist_dir=tmp_path))
    config = index._collections['tools'].configuration['hnsw']
    assert (
        (config['space'], config['max_neighbors'], config['ef_construction'], config['ef_search'])
        == ('l2', 16, 100, 100)
        == tuple(HNSW_CONFIG.values())
    )


def test_restart_reuses_and_never_duplicates(tmp_path, catalog):
    first = CatalogIndex(catalog, ENC, open_client(persist_dir=tmp_path))
    assert set(first.state.values()) == {'built'}
    second = CatalogIndex(catalog, ENC, open_client(persist_dir=tmp_path))
    assert set(second.state.values()) == {'reused'}
    assert second._collections['tools'].count() == 42
    assert second._collections['phrases'].count() == len(second.phrase_records)


def test_catalog_or_model_change_rebuilds(tmp_path, catalog):
    CatalogIndex(catalog, ENC, open_client(persist_dir=tmp_path))
    smaller = Catalog(version=1, tools=catalog.tools[:5])
    rebuilt = CatalogIndex(smaller, ENC, open_client(persist_dir=tmp_path))
    assert set(rebuilt.state.values()) == {'built'}
    assert rebuilt._collections['tools'].count() == 5

    class OtherModel(BagOfWordsEncoder):
        model_id = 'another-model'

    again = CatalogIndex(smaller, OtherModel(['battery']), open_client(persist_dir=tmp_path))
    assert set(again.state.values()) == {'built'}


def test_query_returns_unit_vector_distances(fake_index):
    hits = fake_index.query(fake_index.embed(['land the drone']), 5)[0]
    assert len(hits) == 5
    assert all(0 <= h.distance <= 4 for h in hits)
    assert hits[0].distance <= hits[-1].distance
    assert -1 <= hits[0].similarity <= 1


def test_corrupt_directory_is_a_clear_error(tmp_path):
    (tmp_path / 'chroma.sqlite3').write_bytes(b'this is not a database' * 100)
    with pytest.raises(IndexStoreError, match='corrupt|cannot'):
        CatalogIndex(_tiny_catalog(), ENC, open_client(persist_dir=tmp_path))


def test_router_falls_back_to_memory_and_leaves_the_corrupt_index_untouched(tmp_path, catalog):
    garbage = b'this is not a database' * 100
    (tmp_path / 'chroma.sqlite3').write_bytes(garbage)
    router = Router(RouterConfig(chroma_path=str(tmp_path)), catalog=catalog, encoder=ENC)
    assert 'serving from memory' in router.index_warning
    assert router.health()['index_warning']
    assert router.route('battery', 'cdbv2').tools
    assert (tmp_path / 'chroma.sqlite3').read_bytes() == garbage


def _tiny_catalog():
    from tool_router.common.catalog import Tool

    return Catalog(
        version=1,
        tools=(
            Tool(name='land', kind='actuator', risk='motion', summary='land', description='land'),
        ),
    )
