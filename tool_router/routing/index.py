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

Exact scoring (the default policy on catalogs up to ``EXACT_MAX_RECORDS``
records) needs the record vectors, not Chroma. Given a client *factory* instead
of a client, the index opens Chroma only when something needs it: the vectors
come from a cache file keyed by the content hash (``<prefix>-vectors.npz`` in
``cache_dir``, written after a build) or, for an in-memory index, straight from
the encoder; Chroma is opened, and its collections reused or filled from those
vectors without embedding again, on the first :meth:`CatalogIndex.query` (the
``cdb*`` policies, ``shortlist: hnsw`` on large catalogs). Importing and opening
Chroma was about 70% of a router's start-up (docs/PERFORMANCE.md, "Cold start").
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Sequence, get_args
from urllib.parse import urlparse

import numpy as np

from tool_router.common.catalog import Catalog
from tool_router.routing.embeddings import Encoder
from tool_router.common.errors import ConfigError, IndexStoreError
from tool_router.common.paths import write_cache_file

log = logging.getLogger(__name__)

INDEX_SCHEMA = 1
EMBED_CHUNK = 512  # texts embedded per step of an index build
PROGRESS_EVERY = 2000  # builds larger than this report progress
HNSW_CONFIG = {'space': 'l2', 'max_neighbors': 16, 'ef_construction': 100, 'ef_search': 100}
# Catalogs with more records than this are shortlisted by HNSW before exact scoring
# (measured: benchmarks/scale.py, docs/PERFORMANCE.md "Scale"); the router's
# ``exact_max_records`` parameter overrides it.
EXACT_MAX_RECORDS = 10_000
# How the records of a catalog above it are shortlisted (docs/PERFORMANCE.md, "Scale"):
# 'centroid' = by each tool's record centroid in numpy, 'hnsw' = Chroma's HNSW top records.
Shortlist = Literal['centroid', 'hnsw']  # the router parameter's type (config.py)
SHORTLISTS: tuple[str, ...] = get_args(Shortlist)


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
        cache_dir: str | Path | None = None,
        exact_max_records: int = EXACT_MAX_RECORDS,
        shortlist: str = 'centroid',
    ) -> None:
        """``client``: a Chroma client, or a zero-argument factory of one (opened when needed).

        With a factory, the vectors come from ``cache_dir``'s cache file when its content hash
        matches, else from Chroma (persistent: ``cache_dir`` given; the cache is written then)
        or straight from the encoder (in memory: no ``cache_dir``).
        """
        self.catalog = catalog
        self._progress = progress
        self.build_seconds = 0.0
        self.encoder = encoder
        self.prefix = prefix
        lazy = callable(client) and not hasattr(client, 'get_collection')
        self._factory: Callable[[], Any] | None = client if lazy else None
        self._client = None if lazy else client
        self.warning = ''
        self.tool_records, self.phrase_records = build_records(catalog)
        self._tool_of_id = {r.id: r.tool for r in self.tool_records + self.phrase_records}
        self.exact = len(self.tool_records) + len(self.phrase_records) <= exact_max_records
        if shortlist not in SHORTLISTS:
            raise ConfigError(f'unknown shortlist {shortlist!r}', hint=' or '.join(SHORTLISTS))
        self.shortlist_kind = shortlist
        self._centroid_vectors: np.ndarray | None = None
        digest = hashlib.sha256(
            json.dumps(
                {
                    'schema': INDEX_SCHEMA,
                    'catalog': catalog.content_hash(),
                    'model': getattr(encoder, 'weights_id', encoder.model_id),
                    'hnsw': HNSW_CONFIG,
                },
                sort_keys=True,
            ).encode()
        ).hexdigest()
        self.content_hash = digest
        self.state: dict[str, str] = {}
        self._collections: dict[str, Any] = {}
        self._counts: dict[str, int] = {}
        self._open_lock = threading.Lock()
        self._cache_file = Path(cache_dir) / f'{prefix}-vectors.npz' if cache_dir else None
        cached = self._read_cache() if lazy else None
        if cached is not None:
            self.tool_vectors, self.phrase_vectors = cached
            self.state = {f'{prefix}-tools': 'cached', f'{prefix}-phrases': 'cached'}
        elif lazy and self._cache_file is None:  # in memory: no store needed for the vectors
            self.tool_vectors = self._embed(f'{prefix}-tools', self.tool_records)
            self.phrase_vectors = self._embed(f'{prefix}-phrases', self.phrase_records)
            self.state = {f'{prefix}-tools': 'embedded', f'{prefix}-phrases': 'embedded'}
        else:
            self._open()
            # Unit vectors of the records, read back from the store, for exact scoring.
            self.tool_vectors = self._vectors('tools', self.tool_records)
            self.phrase_vectors = self._vectors('phrases', self.phrase_records)
            self._write_cache()
        if not self.exact and shortlist == 'hnsw':
            self._open()  # HNSW shortlists from the first request on: no first-query stall
        elif not self.exact:
            self._centroid_vectors = self._centroids()

    @classmethod
    def ephemeral(
        cls,
        catalog: Catalog,
        encoder: Encoder,
        exact_max_records: int = EXACT_MAX_RECORDS,
        shortlist: str = 'centroid',
    ) -> 'CatalogIndex':
        """An in-memory index with a unique prefix (ephemeral clients share one process store).

        Chroma is created only when queried (:meth:`query`).
        """
        return cls(
            catalog,
            encoder,
            open_client,
            prefix=f'tr-{uuid.uuid4().hex[:12]}',
            exact_max_records=exact_max_records,
            shortlist=shortlist,
        )

    # -- the store ------------------------------------------------------------------------
    def _open(self) -> None:
        """Open Chroma and its two collections (reused, or built: from known vectors if any)."""
        with self._open_lock:
            if self._collections:
                return
            known = getattr(self, 'tool_vectors', None) is not None
            if self._client is None:
                assert self._factory is not None
                try:
                    self._client = self._factory()
                except IndexStoreError as exc:
                    if not known:  # at start-up: the router decides (it serves from memory)
                        raise
                    # The vectors are known: HNSW from memory beats no answer.
                    self.warning = f'persistent index unusable, HNSW from memory: {exc}'
                    log.error(self.warning)
                    self._client = open_client()
                    self.prefix = f'tr-{uuid.uuid4().hex[:12]}'
            self._collections = {
                'tools': self._ensure(
                    f'{self.prefix}-tools',
                    self.tool_records,
                    self.tool_vectors if known else None,
                ),
                'phrases': self._ensure(
                    f'{self.prefix}-phrases',
                    self.phrase_records,
                    self.phrase_vectors if known else None,
                ),
            }

    def _ensure(self, name: str, records: list[Record], vectors: np.ndarray | None) -> Any:
        client = self._client
        assert client is not None
        try:
            try:
                col = client.get_collection(name)
            except Exception:  # noqa: BLE001 - NotFoundError differs across versions
                col = None
            if col is not None:
                meta = col.metadata or {}
                if meta.get('content_hash') == self.content_hash and col.count() == len(records):
                    self.state[name] = 'reused'
                    return col
                client.delete_collection(name)
            col = client.create_collection(
                name,
                configuration={'hnsw': dict(HNSW_CONFIG)},
                embedding_function=None,
                metadata={
                    'content_hash': self.content_hash,
                    'model': self.encoder.model_id,
                    'schema': INDEX_SCHEMA,
                },
            )
        except Exception as exc:  # noqa: BLE001 - chroma raises many types
            raise IndexStoreError(
                f'cannot open or create collection: {exc}',
                where=name,
                hint='the index may be corrupt; remove its directory to rebuild',
            ) from None
        self._add(name, col, records, vectors)
        self.state[name] = 'built'
        return col

    def _add(
        self, name: str, col: Any, records: list[Record], vectors: np.ndarray | None = None
    ) -> None:
        """Add ``records`` in chunks below Chroma's batch limit (embedding them unless given).

        A failed add names its chunk and the store's batch limit; it is not blamed on a
        corrupt index, and errors of the encoder pass through as they are.
        """
        limit = max_batch_size(self._client)
        step = max(1, min(EMBED_CHUNK, limit))
        if vectors is None:
            vectors = self._embed(name, records, step)
        start = time.perf_counter()
        loud = self._progress is not None and len(records) > PROGRESS_EVERY
        for lo in range(0, len(records), step):
            chunk = records[lo : lo + step]
            try:
                col.add(
                    ids=[r.id for r in chunk],
                    embeddings=vectors[lo : lo + step],
                    documents=[r.text for r in chunk],
                    metadatas=[{'tool': r.tool, 'kind': r.kind} for r in chunk],
                )
            except Exception as exc:  # noqa: BLE001 - chroma raises many types
                raise IndexStoreError(
                    f'adding records {lo}..{lo + len(chunk) - 1} of {len(records)} failed: {exc}',
                    where=name,
                    hint=f'chunks of {step} records (the store accepts {limit} per add); '
                    'check disk space and the Chroma server',
                ) from None
            done = lo + len(chunk)
            if loud and (done == len(records) or (done // step) % 10 == 0):
                self._report(f'indexing {name}: {done}/{len(records)} records', start)
        self.build_seconds += time.perf_counter() - start

    def _report(self, what: str, start: float) -> None:
        if self._progress is not None:
            self._progress(f'{what} ({time.perf_counter() - start:.0f} s)')

    def _embed(self, name: str, records: list[Record], step: int = EMBED_CHUNK) -> np.ndarray:
        """Vectors of ``records`` from the encoder, ``step`` at a time, with progress."""
        if not records:
            return np.zeros((0, 1), dtype=np.float32)
        start = time.perf_counter()
        loud = len(records) > PROGRESS_EVERY
        parts = []
        for lo in range(0, len(records), step):
            parts.append(self.encoder.encode([r.text for r in records[lo : lo + step]]))
            done = lo + len(parts[-1])
            if loud and (done == len(records) or (done // step) % 10 == 0):
                self._report(f'embedding {name}: {done}/{len(records)} records', start)
        self.build_seconds += time.perf_counter() - start
        return np.asarray(np.concatenate(parts), dtype=np.float32)

    def _read_cache(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self._cache_file is None or not self._cache_file.exists():
            return None
        try:
            with np.load(self._cache_file, allow_pickle=False) as data:
                if str(data['content_hash']) != self.content_hash:
                    return None
                tools, phrases = data['tools'], data['phrases']
        except Exception as exc:  # noqa: BLE001 - a torn or foreign file: rebuild from Chroma
            log.warning('ignoring vector cache %s: %s', self._cache_file, exc)
            return None
        if len(tools) != len(self.tool_records) or len(phrases) != len(self.phrase_records):
            return None
        return tools.astype(np.float32), phrases.astype(np.float32)

    def _write_cache(self) -> None:
        if self._cache_file is None:
            return
        write_cache_file(self._cache_file, lambda tmp: np.savez(
            tmp, content_hash=np.array(self.content_hash), tools=self.tool_vectors,
            phrases=self.phrase_vectors), 'vector cache')

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
        """Top-k hits per query vector from one collection (Chroma is opened on first use)."""
        if len(vectors) == 0:
            return []
        if not self._collections:
            self._open()
        col = self._collections[which]
        k = max(1, min(k, self._count(which)))
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

    def _centroids(self) -> np.ndarray:
        """Per tool (catalog order), the unit mean of its records' vectors (document, phrases)."""
        names = list(self.catalog.names)
        col = {n: i for i, n in enumerate(names)}
        sums = np.zeros((len(names), self.tool_vectors.shape[1]), dtype=np.float64)
        for records, vectors in ((self.tool_records, self.tool_vectors),
                                 (self.phrase_records, self.phrase_vectors)):
            if records:
                np.add.at(sums, np.array([col[r.tool] for r in records]), vectors)
        norms = np.clip(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12, None)
        return np.asarray(sums / norms, dtype=np.float32)

    def shortlist(self, vectors: np.ndarray, k: int) -> set[str]:
        """Names of :meth:`shortlist_columns`' tools."""
        names = self.catalog.names
        return {names[j] for j in self.shortlist_columns(vectors, k)}

    def shortlist_columns(self, vectors: np.ndarray, k: int) -> np.ndarray:
        """Tools that may score high for ``vectors``: a superset for exact scoring.

        Catalog columns, ascending. ``centroid``: per vector, the ``2 k`` tools whose record
        centroids are nearest (as many tools as HNSW's two collections can name), one dense
        product over one vector per tool in memory. ``hnsw``: the tools of Chroma's HNSW
        top-``k`` records of each vector in both collections.
        """
        names = self.catalog.names
        if self._centroid_vectors is not None:
            n = min(2 * k, len(names))
            sims = np.asarray(vectors, dtype=np.float32) @ self._centroid_vectors.T
            top = np.argpartition(-sims, n - 1, axis=1)[:, :n]
            return np.unique(top)
        if not self._collections:
            self._open()
        tools: set[str] = set()
        for which in ('tools', 'phrases'):
            col = self._collections[which]
            try:
                # Ids only: fetching metadata from Chroma's SQLite tripled the query time.
                res = col.query(
                    query_embeddings=np.asarray(vectors, dtype=np.float32),
                    n_results=max(1, min(k, self._count(which))),
                    include=[],
                )
            except Exception as exc:  # noqa: BLE001
                raise IndexStoreError(f'query failed: {exc}', where=col.name) from None
            tools.update(self._tool_of_id[i] for ids in res['ids'] for i in ids)
        col = self.catalog.columns
        return np.array(sorted(col[t] for t in tools), dtype=np.int64)

    def _count(self, which: str) -> int:
        """Records of a collection (fixed while the index lives; Chroma's count() costs ms)."""
        if which not in self._counts:
            self._counts[which] = int(self._collections[which].count())
        return self._counts[which]

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
            'search': 'exact' if self.exact else f'{self.shortlist_kind}-shortlist',
            **({'warning': self.warning} if self.warning else {}),
        }
