"""lcr's memory: the development requests, kept as exemplars of the tools they asked for.

The catalog gives each tool a handful of example phrases written by the catalog's authors;
operators word the same needs in many more ways ("it's getting dark and I can't see them"
for the spotlight). ``tool-router fit lcr`` keeps the development split's requests in the
model file, and lcr compares every request with them (nearest neighbours, no words learnt):

- **exemplar requests**: every in-scope request with the tools it asked for;
- **exemplar units**: a one-tool request, or a clause of a multi-tool request given to the
  gold tool it is closest to (the clause and tool of the catalog's own similarity; a clause
  below ``UNIT_MIN_SIMILARITY`` to every gold tool is left out);
- **out-of-scope exemplars**: the requests that no tool serves;
- **context clauses**: a counting clause of an in-scope request of two or more counting
  clauses whose closest tool is none of the request's tools ("we're down to our last battery
  - map the vineyard now": the battery clause is background, not a request).

Per tool, lcr's scorer gets (:data:`TOOL_FEATURES`): the best similarity of the whole
request to an exemplar request that asked for the tool (``nn_full``), its gap to the best
tool's (``nn_gap``), the tool's weighted share of the ``VOTE_K`` nearest exemplar requests
(``nn_vote``), and the best similarity of a counting clause to one of the tool's units
(``nn_clause``), and how much closer the tool's strongest clause is to a context clause than
to the tool's units (``nn_ctx_gap``: a clause that only sets the scene asks for no tool); the
scope model gets the mean of the three best similarities to
out-of-scope exemplars minus the same for in-scope ones (``nn_scope``).

A request's own wording must never be its evidence: at fit time a development request's
features come from a memory without its writer's requests (the writer folds of
:func:`tool_router.evaluation.fitting.encoder.writer_folds`), so the scorer is fitted on the
similarities an unseen writer gets. The vectors of the exemplars are computed with the
router's encoder once and cached by the texts' and the weights' digest (``cache_root()``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from tool_router.common.paths import config_path, write_cache_file

log = logging.getLogger(__name__)

TOOL_FEATURES = ('nn_full', 'nn_clause', 'nn_gap', 'nn_vote', 'nn_ctx_gap')
VOTE_K = 10  # nearest exemplar requests that vote
VOTE_TEMPERATURE = 0.05  # a neighbour's weight: exp((similarity - best) / this)
SCOPE_K = 3  # nearest exemplars averaged on each side of the scope feature
UNIT_MIN_SIMILARITY = 0.3  # a clause this far from every gold tool is no unit
EMBED_STEP = 512


@dataclass(frozen=True)
class Exemplars:
    """Exemplar texts and what each stands for; ``source`` ids say which request it came from."""

    texts: tuple[str, ...]
    requests: tuple[tuple[int, str, tuple[str, ...]], ...]  # (text, source id, tools)
    units: tuple[tuple[int, str, str], ...]  # (text, source id, tool)
    out_of_scope: tuple[tuple[int, str], ...]  # (text, source id)
    context: tuple[tuple[int, str], ...] = ()  # (text, source id): clauses asking for no tool

    @classmethod
    def empty(cls) -> 'Exemplars':
        """No exemplar (a model file from before the memory)."""
        return cls((), (), (), ())

    def __len__(self) -> int:
        return len(self.texts)

    def sources(self) -> set[str]:
        """Ids of the requests the exemplars came from."""
        return ({s for _, s, _ in self.requests} | {s for _, s in self.out_of_scope}
                | {s for _, s, _ in self.units} | {s for _, s in self.context})

    def digest(self) -> str:
        """sha256 of the texts (the vectors depend on nothing else but the encoder)."""
        return hashlib.sha256('\n'.join(self.texts).encode('utf-8')).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """The model file's ``exemplars`` entry."""
        return {
            'texts': list(self.texts),
            'requests': [[t, s, list(tools)] for t, s, tools in self.requests],
            'units': [list(u) for u in self.units],
            'out_of_scope': [list(o) for o in self.out_of_scope],
            'context': [list(c) for c in self.context],
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> 'Exemplars':
        """Read :meth:`to_json`'s form; a text index out of range is an error."""
        texts = tuple(str(t) for t in raw['texts'])
        n = len(texts)

        def at(raw_index: Any) -> int:
            i = int(raw_index)
            if not 0 <= i < n:
                raise ValueError(f'exemplar text index {i} outside 0..{n - 1}')
            return i

        return cls(
            texts,
            tuple((at(t), str(s), tuple(str(x) for x in tools))
                  for t, s, tools in raw['requests']),
            tuple((at(t), str(s), str(tool)) for t, s, tool in raw['units']),
            tuple((at(t), str(s)) for t, s in raw['out_of_scope']),
            tuple((at(t), str(s)) for t, s in raw.get('context', [])),
        )


class ExemplarBuilder:
    """Collects exemplars from routed development requests (``tool-router fit lcr``)."""

    def __init__(self) -> None:
        self._texts: dict[str, int] = {}
        self.requests: list[tuple[int, str, tuple[str, ...]]] = []
        self.units: list[tuple[int, str, str]] = []
        self.out_of_scope: list[tuple[int, str]] = []
        self.context: list[tuple[int, str]] = []

    def _text(self, text: str) -> int:
        return self._texts.setdefault(text, len(self._texts))

    def add(
        self,
        source: str,
        text: str,
        tools: Sequence[str],
        clauses: Sequence[str] = (),
        clause_score: Sequence[Sequence[float]] | np.ndarray = (),
        counting: Sequence[bool] = (),
        columns: dict[str, int] | None = None,
    ) -> None:
        """One request: ``text`` (as lcr embeds it), its gold ``tools`` (none: out of scope).

        A multi-tool request's counting ``clauses`` become units of the gold tool each is
        closest to (``clause_score[clause][columns[tool]]``, lcr's clause-to-tool similarity,
        one column per catalog tool); in a request of two or more counting clauses, one whose
        closest catalog tool is not a gold tool becomes a context clause.
        """
        if not tools:
            self.out_of_scope.append((self._text(text), source))
            return
        self.requests.append((self._text(text), source, tuple(sorted(tools))))
        several = sum(bool(c) for c in counting) >= 2  # a lone clause is never mere context
        if len(tools) == 1:
            self.units.append((self._text(text), source, tools[0]))
            if not several:
                return
        assert columns is not None
        gold = {columns[t] for t in tools}
        for k, clause in enumerate(clauses):
            if not counting[k]:
                continue
            if len(tools) > 1:
                best = max(sorted(tools), key=lambda t: float(clause_score[k][columns[t]]))
                if float(clause_score[k][columns[best]]) >= UNIT_MIN_SIMILARITY:
                    self.units.append((self._text(clause), source, best))
            if several and int(np.argmax(clause_score[k])) not in gold:
                self.context.append((self._text(clause), source))

    def build(self) -> Exemplars:
        """The exemplars collected so far."""
        return Exemplars(tuple(self._texts), tuple(self.requests), tuple(self.units),
                         tuple(self.out_of_scope), tuple(self.context))


def empty_features(n_tools: int) -> np.ndarray:
    """:data:`TOOL_FEATURES` with nothing in the memory: no exemplar request, no unit."""
    out = np.zeros((n_tools, len(TOOL_FEATURES)), dtype=np.float32)
    out[:, 0] = out[:, 1] = -1.0  # nn_full, nn_clause
    return out


def _grouped(tools: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order sorting ``tools``, segment starts, tool of each segment) for ``reduceat``."""
    order = np.argsort(tools, kind='stable')
    s = tools[order]
    if not len(s):
        return order, np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return order, starts, s[starts]


class ExemplarMemory:
    """Exemplar vectors bound to a catalog's tool columns, and the features lcr takes from them.

    ``keep(source)`` false leaves an exemplar out (a fit's own writer fold); exemplars of tools
    the catalog lacks are left out.
    """

    def __init__(
        self,
        exemplars: Exemplars,
        vectors: np.ndarray,
        names: Sequence[str],
        keep: Callable[[str], bool] | None = None,
    ) -> None:
        if len(vectors) != len(exemplars):
            raise ValueError(f'{len(vectors)} vectors for {len(exemplars)} exemplar texts')
        self.exemplars, self.vectors, self.names = exemplars, vectors, list(names)
        ok = keep or (lambda _s: True)
        col = {n: i for i, n in enumerate(names)}
        self.n_tools = len(names)
        dim = vectors.shape[1] if vectors.ndim == 2 and len(vectors) else 1
        reqs = [(t, [col[x] for x in tools if x in col]) for t, s, tools in exemplars.requests
                if ok(s)]
        reqs = [(t, cols) for t, cols in reqs if cols]
        self.request_vectors = (np.ascontiguousarray(vectors[[t for t, _ in reqs]])
                                if reqs else np.zeros((0, dim), np.float32))
        self._row_tools = [np.array(cols, np.int64) for _, cols in reqs]  # a request's tools
        pair_row = np.array([r for r, (_, cols) in enumerate(reqs) for _ in cols], np.int64)
        pair_tool = np.array([c for _, cols in reqs for c in cols], np.int64)
        order, self._pair_starts, self._pair_tools = _grouped(pair_tool)
        self._pair_rows = pair_row[order]
        units = [(t, col[tool]) for t, s, tool in exemplars.units if ok(s) and tool in col]
        unit_tool = np.array([c for _, c in units], np.int64)
        order, self._unit_starts, self._unit_tools = _grouped(unit_tool)
        self.unit_vectors = (np.ascontiguousarray(vectors[[units[i][0] for i in order]])
                             if units else np.zeros((0, dim), np.float32))
        oos = [t for t, s in exemplars.out_of_scope if ok(s)]
        self.oos_vectors = (np.ascontiguousarray(vectors[oos]) if oos
                            else np.zeros((0, dim), np.float32))
        ctx = [t for t, s in exemplars.context if ok(s)]
        self.context_vectors = (np.ascontiguousarray(vectors[ctx]) if ctx
                                else np.zeros((0, dim), np.float32))
        self.size = len(reqs) + len(oos)

    def without(self, drop: Callable[[str], bool]) -> 'ExemplarMemory':
        """The same memory without the exemplars whose source ``drop`` names."""
        return ExemplarMemory(self.exemplars, self.vectors, self.names,
                              lambda source: not drop(source))

    def features(
        self, full: np.ndarray, clauses: np.ndarray, counting: np.ndarray, clause_score: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """(per tool :data:`TOOL_FEATURES`, ``nn_scope``) of one request.

        ``full``: the request's vector; ``clauses``: its clauses' vectors (rows);
        ``counting``: which clauses count (not negated, not steering); ``clause_score``:
        lcr's clause-to-tool similarity (clauses x tools), whose best counting clause per tool
        is the one ``nn_ctx_gap`` looks at.
        """
        T = self.n_tools
        out = empty_features(T)
        scope = 0.0
        if len(self.request_vectors):
            sf = self.request_vectors @ full  # (requests,)
            if len(self._pair_rows):
                out[self._pair_tools, 0] = np.maximum.reduceat(sf[self._pair_rows],
                                                               self._pair_starts)
            out[:, 2] = out[:, 0] - out[:, 0].max()
            k = min(VOTE_K, len(sf))
            near = np.argpartition(-sf, k - 1)[:k]
            w = np.exp((sf[near] - sf[near].max()) / VOTE_TEMPERATURE)
            votes = np.zeros(T, np.float64)
            for r, weight in zip(near, w):
                votes[self._row_tools[r]] += weight
            out[:, 3] = votes / w.sum()
            if len(self.oos_vectors):
                so = self.oos_vectors @ full
                scope = float(_top_mean(so, SCOPE_K) - _top_mean(sf, SCOPE_K))
        rows = np.flatnonzero(counting)
        if not len(rows):
            return out, scope
        # memory x clauses, not clauses x memory: OpenBLAS runs the tall product faster for a
        # handful of clauses (the same numbers to 7e-7; benchmarks/results/HISTORY.md,
        # "Performance, sixth pass")
        vc_t = np.ascontiguousarray(clauses[rows].T)  # (dim, clauses)
        per_clause = np.full((len(rows), T), -1.0, dtype=np.float32)  # best unit per tool
        if len(self.unit_vectors):
            per_clause[:, self._unit_tools] = np.maximum.reduceat(
                self.unit_vectors @ vc_t, self._unit_starts, axis=0).T
            out[:, 1] = per_clause.max(axis=0)
        context = ((self.context_vectors @ vc_t).max(axis=0) if len(self.context_vectors)
                   else np.full(len(rows), -1.0, dtype=np.float32))
        home = np.asarray(clause_score)[rows].argmax(axis=0)  # (T,) each tool's best clause
        out[:, 4] = context[home] - per_clause[home, np.arange(T)]
        return out, scope


def _top_mean(x: np.ndarray, k: int) -> float:
    k = min(k, len(x))
    return float(np.partition(x, len(x) - k)[len(x) - k:].mean())


_MEMO: dict[str, np.ndarray] = {}
_MEMO_LOCK = threading.Lock()


def exemplar_vectors(
    exemplars: Exemplars,
    encoder: Any,
    progress: Callable[[str], None] | None = None,
    cache: bool = True,
) -> np.ndarray:
    """Unit vectors of the exemplar texts under ``encoder``, computed once per weights.

    Cached in this process and, for a real model (one with ``weights_id``), on disk under
    ``cache_root()/exemplars`` by the digest of the texts, the weights and the backend, so
    only the first start after a refit embeds them.
    """
    from tool_router.routing.embeddings import cache_root

    if not len(exemplars):
        return np.zeros((0, 1), np.float32)
    weights = getattr(encoder, 'weights_id', '')
    key = hashlib.sha256(json.dumps(
        [exemplars.digest(), weights or encoder.model_id, getattr(encoder, 'backend', '')]
    ).encode()).hexdigest()[:32]
    with _MEMO_LOCK:
        if key in _MEMO:
            return _MEMO[key]
    path = cache_root() / 'exemplars' / f'{key}.npy' if weights and cache else None
    vectors = None
    if path is not None and path.exists():
        try:
            vectors = np.load(path, allow_pickle=False)
            if vectors.shape[0] != len(exemplars):
                vectors = None
        except Exception as exc:  # noqa: BLE001 - a torn or foreign file: embed again
            log.warning('ignoring exemplar cache %s: %s', path, exc)
            vectors = None
    if vectors is None:
        vectors = embed_texts(exemplars.texts, encoder.encode, progress)
        if path is not None:
            write_cache_file(path, lambda tmp: np.save(tmp, vectors, allow_pickle=False),
                             'exemplar cache')
    with _MEMO_LOCK:
        _MEMO[key] = vectors
    return vectors


def embed_texts(texts: Sequence[str], encode: Callable[[list[str]], np.ndarray],
                progress: Callable[[str], None] | None = None) -> np.ndarray:
    """``encode`` over ``texts`` ``EMBED_STEP`` at a time (float32 rows), with progress."""
    start = time.perf_counter()
    parts = []
    for lo in range(0, len(texts), EMBED_STEP):
        parts.append(np.asarray(encode(list(texts[lo:lo + EMBED_STEP])), np.float32))
        if progress is not None and len(texts) > EMBED_STEP:
            done = lo + len(parts[-1])
            progress(f'embedding exemplars: {done}/{len(texts)} '
                     f'({time.perf_counter() - start:.0f} s)')
    return np.concatenate(parts)


def load_exemplars(path: str | Path = '') -> Exemplars:
    """The exemplars stored in a fitted model file (default: the shipped one); none if absent."""
    from tool_router.common.errors import ConfigError

    path = Path(path) if path else config_path('lcr_model.json')
    try:
        raw = json.loads(path.read_text(encoding='utf-8'))
        return Exemplars.from_json(raw['exemplars']) if 'exemplars' in raw else Exemplars.empty()
    except FileNotFoundError:
        raise ConfigError('fitted scorer not found', where=str(path)) from None
    except Exception as exc:  # noqa: BLE001 - JSON or shape errors
        raise ConfigError(f'invalid exemplars: {exc}', where=str(path)) from None


def in_memory_warning(ids: Sequence[str], model_path: str | Path = '') -> str:
    """A warning naming how many of ``ids`` lcr's memory holds ('' when none).

    lcr's answers to those requests are in-sample: each finds itself among the exemplars.
    """
    sources = load_exemplars(model_path).sources()
    inside = sum(i in sources for i in ids)
    if not inside:
        return ''
    return (f'{inside} of the {len(ids)} requests are in lcr\'s exemplar memory (the requests '
            'its model was fitted on): lcr\'s answers to them are in-sample')

