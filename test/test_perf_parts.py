"""Micro-batching encoder, admission control (busy answers) and chunked index builds."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from fakes import BagOfWordsEncoder
from tool_router.routing.embeddings import BatchingEncoder
from tool_router.routing.serving import BUSY, Admission, ServingParams

VOCAB = ['land', 'take', 'off', 'photo', 'battery', 'wind', 'return', 'home']


class CountingEncoder(BagOfWordsEncoder):
    """A real bag-of-words encoder that records each batch it is given (and is slow)."""

    def __init__(self) -> None:
        super().__init__(VOCAB)
        self.calls: list[int] = []

    def encode(self, texts):
        self.calls.append(len(texts))
        time.sleep(0.05)
        return super().encode(texts)


def test_concurrent_callers_share_one_pass_and_get_their_own_rows():
    inner = CountingEncoder()
    in_flight = 6
    enc = BatchingEncoder(inner, max_wait_ms=500, max_batch=64, expected=lambda: in_flight)
    texts = [[f'land {i}', 'take off'] if i % 2 else ['battery'] for i in range(in_flight)]
    results: dict[int, np.ndarray] = {}

    def call(i: int) -> None:
        results[i] = enc.encode(texts[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(in_flight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(results) == in_flight
    for i in range(in_flight):
        assert np.allclose(results[i], BagOfWordsEncoder(VOCAB).encode(texts[i]))
    # Fewer passes than callers: the leader waited for the others (all 6 were in flight).
    assert len(inner.calls) < in_flight
    assert sum(inner.calls) == sum(len(t) for t in texts)
    assert enc.batched_calls == in_flight


def test_a_lone_caller_does_not_wait_for_company():
    inner = CountingEncoder()
    # A wait of ten hours would be taken if the lone caller waited for company.
    enc = BatchingEncoder(inner, max_wait_ms=36_000_000, max_batch=64, expected=lambda: 1)
    worker = threading.Thread(target=enc.encode, args=(['land'],), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive()
    assert inner.calls == [1]


class OverlapEncoder(CountingEncoder):
    """Records how many passes run at once; says it may run passes concurrently."""

    concurrent = True

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def encode(self, texts):
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            return super().encode(texts)  # sleeps 50 ms
        finally:
            with self.lock:
                self.running -= 1


@pytest.mark.parametrize('lanes', [1, 2])
def test_lanes_bound_the_passes_that_run_at_once(lanes):
    inner = OverlapEncoder()
    enc = BatchingEncoder(inner, max_wait_ms=0, max_batch=64, lanes=lanes)
    texts = [['land'], ['take off'], ['photo', 'wind'], ['battery'], ['return home'], ['land']]
    results: dict[int, np.ndarray] = {}
    start = threading.Barrier(len(texts))

    def call(i: int) -> None:
        start.wait()
        results[i] = enc.encode(texts[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for i, got in results.items():
        assert np.allclose(got, BagOfWordsEncoder(VOCAB).encode(texts[i]))
    assert len(results) == len(texts) and enc.batched_calls == len(texts)
    assert sum(inner.calls) == sum(len(t) for t in texts)  # every text in exactly one pass
    assert inner.most <= lanes


def test_with_two_lanes_a_second_pass_runs_while_the_first_is_still_running():
    class Gated(OverlapEncoder):
        """The first pass does not finish before a second one has started."""

        def __init__(self) -> None:
            super().__init__()
            self.second = threading.Event()
            self.started = 0

        def encode(self, texts):
            with self.lock:
                self.started += 1
                first = self.started == 1
            if not first:
                self.second.set()
            elif not self.second.wait(60):
                raise AssertionError('no second pass started while the first ran')
            return super().encode(texts)

    inner = Gated()
    enc = BatchingEncoder(inner, max_wait_ms=0, max_batch=64, lanes=2)
    out: list[np.ndarray] = []
    first = threading.Thread(target=lambda: out.append(enc.encode(['land'])))
    first.start()
    while not enc._running:  # the first caller leads its pass
        time.sleep(0.001)
    out.append(enc.encode(['photo']))  # runs in the second lane, not after the first pass
    first.join(60)
    assert inner.second.is_set() and len(out) == 2 and enc.batches == 2


def test_a_model_that_cannot_run_passes_at_once_gets_one_lane():
    assert BatchingEncoder(CountingEncoder(), lanes=4).lanes == 1
    assert BatchingEncoder(OverlapEncoder(), lanes=4).lanes == 4


def test_batch_bound_and_errors_reach_every_caller():
    class Failing(CountingEncoder):
        def encode(self, texts):
            raise RuntimeError('model broke')

    enc = BatchingEncoder(Failing(), max_wait_ms=0, max_batch=2)
    with pytest.raises(RuntimeError, match='model broke'):
        enc.encode(['land', 'take off', 'photo'])
    inner = CountingEncoder()
    enc = BatchingEncoder(inner, max_wait_ms=0, max_batch=2)
    assert enc.encode(['land', 'take off', 'photo']).shape == (3, len(VOCAB) + 1)
    assert enc.encode([]).shape[0] == 0


def test_admission_answers_busy_beyond_the_bound_and_counts_it():
    adm = Admission(ServingParams(max_in_flight=2, llm_slots=1, threads=4))
    a, b = adm.enter('lcr'), adm.enter('cdbv3')
    c = adm.enter('lcr')
    assert a.admitted and b.admitted and not c.admitted and c.reason == BUSY
    adm.leave(a)
    llm = adm.enter('hybrid')
    assert llm.admitted
    adm.leave(b)
    second_llm = adm.enter('llm')  # one LLM slot only
    assert not second_llm.admitted
    assert adm.enter('lcr').admitted  # a local request still gets in
    assert adm.counters() == {'in_flight': 2, 'llm_in_flight': 1, 'busy': 2, 'busy_llm': 1}
    adm.leave(c)  # not admitted: leaving changes nothing
    assert adm.counters()['in_flight'] == 2


def test_index_is_built_in_chunks_below_the_store_batch_limit(catalog, monkeypatch):
    import tool_router.routing.index as index_mod

    monkeypatch.setattr(index_mod, 'max_batch_size', lambda client: 50)
    monkeypatch.setattr(index_mod, 'PROGRESS_EVERY', 100)
    encoder = BagOfWordsEncoder(VOCAB)
    seen: list[int] = []
    orig = encoder.encode

    def encode(texts):
        seen.append(len(texts))
        return orig(texts)

    encoder.encode = encode  # type: ignore[method-assign]
    messages: list[str] = []
    client = index_mod.open_client()
    idx = index_mod.CatalogIndex(
        catalog, encoder, client, prefix='chunked', progress=messages.append
    )
    n_phrases = len(idx.phrase_records)
    assert n_phrases > 100 and max(seen) <= 50
    assert idx._collections['phrases'].count() == n_phrases
    assert idx.phrase_vectors.shape == (n_phrases, len(VOCAB) + 1)
    last = f'indexing chunked-phrases: {n_phrases}/{n_phrases}'
    assert messages and messages[-1].startswith(last)
