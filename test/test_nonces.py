"""Used nonces survive a restart (pure): a signature is taken once, ever."""
from __future__ import annotations

import json

from tool_router.common.nonces import NonceStore


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_nonce_is_taken_once_and_on_disk_before_it_counts(tmp_path):
    path = tmp_path / 'executor.nonces'
    store = NonceStore(path, 60.0, Clock())
    assert store.take('n-1') and not store.take('n-1')
    assert [json.loads(line)['nonce'] for line in path.read_text().splitlines()] == ['n-1']


def test_a_restarted_store_still_refuses_a_nonce_used_before_it(tmp_path):
    path = tmp_path / 'executor.nonces'
    clock = Clock()
    NonceStore(path, 60.0, clock).take('captured')
    clock.t += 11.0  # a restart, 11 s later: the captured signature is still fresh
    again = NonceStore(path, 60.0, clock)
    assert 'captured' in again and not again.take('captured')


def test_nonces_older_than_the_window_are_dropped_and_the_file_shrinks(tmp_path):
    path = tmp_path / 'executor.nonces'
    clock = Clock()
    store = NonceStore(path, 60.0, clock)
    for k in range(5):
        store.take(f'old-{k}')
    clock.t += 61.0
    store.take('new')
    with path.open('a') as handle:
        handle.write('{"nonce": "torn')  # a killed writer's last line
    reloaded = NonceStore(path, 60.0, clock)
    assert len(reloaded) == 1 and 'new' in reloaded
    assert [json.loads(line)['nonce'] for line in path.read_text().splitlines()] == ['new']


def test_an_unwritable_file_keeps_the_nonce_in_memory_and_counts_it(tmp_path):
    path = tmp_path / 'executor.nonces'
    store = NonceStore(path, 60.0, Clock())
    path.unlink()
    path.mkdir()  # the file cannot be opened for appending any more
    assert store.take('n') and store.unwritten == 1 and not store.take('n')


def test_the_verifier_uses_the_store_it_is_given_even_while_it_is_empty(tmp_path):
    """An empty store is falsy (it has a length): ``nonces or default`` had swapped it for a
    memory-only one, and nothing was written."""
    from tool_router.executor.auth import ConfirmationVerifier, OperatorsFile
    store = NonceStore(tmp_path / 'executor.nonces', 60.0)
    assert len(store) == 0
    verifier = ConfirmationVerifier(OperatorsFile(), {}, lambda tool: 'none', nonces=store)
    assert verifier.nonces is store
