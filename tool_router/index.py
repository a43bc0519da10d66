"""The catalog's vector index in ChromaDB.

Two collections per catalog:

* ``<prefix>-tools``: one record per tool (name, summary, description), the
  records the paper's CDB routers retrieve;
* ``<prefix>-phrases``: one record per example request and condition phrase,
  used by the default policy.

HNSW with l2 distance, M=16, ef_construction=100, ef_search=100 (the paper's
setting). Embeddings are computed by our own :class:`Encoder` (Chroma's default
embedding function is never used: it would download a model). Each collection
carries a content hash of the catalog, the model and the record set; a
collection whose hash matches is reused, anything else is rebuilt, so a
restart never duplicates records.

Records are embedded and added in chunks below Chroma's maximum batch size
(one ``add`` of more records than that fails, and Chroma's error then blames a
corrupt index); a build of more than ``PROGRESS_EVERY`` records reports its
progress.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import urlparse

import numpy as np

from tool_router.catalog import Catalog
from tool_router.embeddings import Encoder
from tool_router.errors import ConfigError, IndexStoreError

INDEX_SCHEMA = 1
EMBED_CHUNK = 512  # texts embedded per step of an index build
PROGRESS_EVERY = 2000  # builds larger than this report progress
HNSW_CONFIG = {'space': 'l2', 'max_neighbors': 16, 'ef_construction': 100, 'ef_search': 100}


@dataclass(frozen=True)
class Record:
    """One indexed text and the tool it stands for."""

    id: str
    tool: str
    kind: str  # 'tool' | 'example' | 'condition'
    text: str


@dataclass(frozen=True)
class Hit:
    """One retrieved record; ``distance`` is Chroma's squared l2 on unit vectors (0..4)."""

    tool: str
    distance: float
    kind: str
    text: str

    @property
    def similarity(self) -> float:
        """Cosine similarity recovered from the squared l2 distance of unit vectors."""
        return 1.0 - self.distance / 2.0


def build_records(catalog: Catalog) -> tuple[list[Record], list[Record]]:
    """(tool records, phrase records) for a catalog."""
    tools = [Record(f'tool:{t.name}', t.name, 'tool', t.document) for t in catalog]
    phrases: list[Record] = []
    for t in catalog:
        phrases += [
            Record(f'ex:{t.name}:{i}', t.name, 'example', x) for i, x in enumerate(t.examples)
        ]
        phrases += [
            Record(f'cond:{t.name}:{i}', t.name, 'condition', x)
            for i, x in enumerate(t.conditions)
        ]
    return tools, phrases


def max_batch_size(client: Any) -> int:
    """The most records one Chroma ``add`` accepts (5,461 for the embedded client here)."""
    for attr in ('get_max_batch_size', 'max_batch_size'):
        value = getattr(client, attr, None)
        try:
            value = value() if callable(value) else value
        except Exception:  # noqa: BLE001 - a server that does not say
            value = None
        if isinstance(value, int) and value > 0:
            return value
    return 1000


def stderr_progress(message: str) -> None:
    """Report index-build progress on stderr (the default progress callback)."""
    print(f'tool_router: {message}', file=sys.stderr, flush=True)


def open_client(persist_dir: str | Path | None = None, url: str | None = None) -> Any:
    """A Chroma client: HTTP when ``url`` is given, persistent for a directory, else ephemeral."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    try:
        if url:
            parsed = urlparse(url if '://' in url else f'http://{url}')
            if not parsed.hostname:
                raise ConfigError(f'invalid Chroma URL {url!r}', hint='use http://HOST:PORT')
            return chromadb.HttpClient(
                host=parsed.hostname,
                port=parsed.port or 8000,
                ssl=parsed.scheme == 'https',
                settings=settings,
            )
        if persist_dir:
            Path(persist_dir).mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(persist_dir), settings=settings)
        return chromadb.EphemeralClient(settings=settings)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - chroma raises many types
        where = url or str(persist_dir or 'ephemeral')
        raise IndexStoreError(
            f'cannot open Chroma: {exc}',
            where=where,
            hint='check the server URL, or move the corrupt directory away',
        ) from None


class CatalogIndex:
    """The catalog's records in Chroma, queried with our own embeddings."""

    def __init__(
        self,
        catalog: Catalog,
        encoder: Encoder,
        client: Any,
        prefix: str = 'tool-router',
        progress: Callable[[str], None] | None = stderr_progress,
    ) -> None:
        self.catalog = catalog
        self._progress = progress
        self.build_seconds = 0.0
        self.encoder = encoder
        self._client = client
        self.tool_records, self.phrase_records = build_records(catalog)
        digest = hashlib.sha256(
            json.dumps(
                {
                    'schema': INDEX_SCHEMA,
                    'catalog': catalog.content_hash(),
                    'model': encoder.model_id,
                    'hnsw': HNSW_CONFIG,
                },
                sort_keys=True,
            ).encode()
        ).hexdigest()
        self.content_hash = digest
        self.state: dict[str, str] = {}
        self._collections = {
            'tools': self._ensure(f'{prefix}-tools', self.tool_records),
            'phrases': self._ensure(f'{prefix}-phrases', self.phrase_records),
        }
        # Unit vectors of the records, read back from the store, for exact scoring.
        self.tool_vectors = self._vectors('tools', self.tool_records)
        self.phrase_vectors = self._vectors('phrases', self.phrase_records)

    @classmethod
    def ephemeral(cls, catalog: Catalog, encoder: Encoder) -> 'CatalogIndex':
        """An in-memory index with a unique prefix (ephemeral clients share one process store)."""
        return cls(catalog, encoder, open_client(), prefix=f'tr-{uuid.uuid4().hex[:12]}')

    def _ensure(self, name: str, records: list[Record]) -> Any:
        try:
            try:
                col = self._client.get_collection(name)
            except Exception:  # noqa: BLE001 - NotFoundError differs across versions
                col = None
            if col is not None:
                meta = col.metadata or {}
                if meta.get('content_hash') == self.content_hash and col.count() == len(records):
                    self.state[name] = 'reused'
                    return col
                self._client.delete_collection(name)
            col = self._client.create_collection(
                name,
                configuration={'hnsw': dict(HNSW_CONFIG)},
                embedding_function=None,
                metadata={
                    'content_hash': self.content_hash,
                    'model': self.encoder.model_id,
                    'schema': INDEX_SCHEMA,
                },
            )
            self._add(name, col, records)
            self.state[name] = 'built'
            return col
        except Exception as exc:  # noqa: BLE001
            raise IndexStoreError(
                f'cannot build or open collection: {exc}',
                where=name,
                hint='the index may be corrupt; remove its directory to rebuild',
            ) from None

    def _add(self, name: str, col: Any, records: list[Record]) -> None:
        """Embed and add ``records`` in chunks below Chroma's batch limit, with progress."""
        start = time.perf_counter()
        step = max(1, min(EMBED_CHUNK, max_batch_size(self._client)))
        loud = self._progress is not None and len(records) > PROGRESS_EVERY
        for lo in range(0, len(records), step):
            chunk = records[lo : lo + step]
            col.add(
                ids=[r.id for r in chunk],
                embeddings=self.encoder.encode([r.text for r in chunk]),
                documents=[r.text for r in chunk],
                metadatas=[{'tool': r.tool, 'kind': r.kind} for r in chunk],
            )
            done = lo + len(chunk)
            if loud and (done == len(records) or (done // step) % 10 == 0):
                assert self._progress is not None
                self._progress(
                    f'indexing {name}: {done}/{len(records)} records '
                    f'({time.perf_counter() - start:.0f} s)'
                )
        self.build_seconds += time.perf_counter() - start

    def _vectors(self, which: str, records: list[Record]) -> np.ndarray:
        if not records:
            return np.zeros((0, 1), dtype=np.float32)
        by_id: dict[str, Any] = {}
        step = max_batch_size(self._client)
        for lo in range(0, len(records), step):
            got = self._collections[which].get(
                ids=[r.id for r in records[lo : lo + step]], include=['embeddings']
            )
            by_id.update(zip(got['ids'], got['embeddings']))
        return np.asarray([by_id[r.id] for r in records], dtype=np.float32)

    def query(self, vectors: np.ndarray, k: int, which: str = 'tools') -> list[list[Hit]]:
        """Top-k hits per query vector from one collection."""
        if len(vectors) == 0:
            return []
        col = self._collections[which]
        k = max(1, min(k, col.count()))
        try:
            res = col.query(
                query_embeddings=np.asarray(vectors, dtype=np.float32),
                n_results=k,
                include=['distances', 'metadatas', 'documents'],
            )
        except Exception as exc:  # noqa: BLE001
            raise IndexStoreError(f'query failed: {exc}', where=col.name) from None
        out = []
        for dists, metas, docs in zip(res['distances'], res['metadatas'], res['documents']):
            out.append(
                [Hit(m['tool'], float(d), m['kind'], doc) for d, m, doc in zip(dists, metas, docs)]
            )
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` with the index's encoder."""
        return self.encoder.encode(list(texts))

    def health(self) -> dict[str, str]:
        """Record counts, build state and content hash (for diagnostics)."""
        return {
            'tools': str(len(self.tool_records)),
            'phrases': str(len(self.phrase_records)),
            'state': ','.join(f'{k}={v}' for k, v in sorted(self.state.items())),
            'content_hash': self.content_hash[:12],
        }
