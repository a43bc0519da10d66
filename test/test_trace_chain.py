"""Tamper-evident traces: every edit, deletion or reordering of a line is found by verify."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tool_router.executor.chain import (TraceChain, load_or_create_chain_key, strip_link,
                                        verify_directory)

KEY = bytes(range(32))


def write_lines(directory, n, per_file=None, stem='executor-x-1'):
    """n records through a chain; a new file every ``per_file`` records (rotation)."""
    chain = TraceChain(directory, stem, KEY)
    paths, handle = [], None
    for i in range(n):
        if handle is None or (per_file and i % per_file == 0):
            if handle:
                handle.close()
            path = directory / f'{stem}-{len(paths) + 1:03d}.jsonl'
            paths.append(path)
            chain.start_file(path)
            handle = path.open('wb')
        handle.write(chain.seal(json.dumps({'request_id': f'r{i}', 'n': i}).encode() + b'\n'))
    handle.close()
    return paths


def test_an_untouched_chain_verifies_across_rotated_files(tmp_path):
    paths = write_lines(tmp_path, 10, per_file=4)
    report = verify_directory(tmp_path, KEY)
    assert report.ok, report
    assert (report.files, report.records, report.manifests) == (3, 10, 1)
    assert len(paths) == 3
    # readers see the record without the link
    first = paths[0].read_text().splitlines()[0]
    assert json.loads(strip_link(first)) == {'request_id': 'r0', 'n': 0}


def edit(path, fn):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(''.join(fn(lines)))


@pytest.mark.parametrize('what, fn, where', [
    ('edited', lambda ls: ls[:2] + [ls[2].replace('"r2"', '"r9"')] + ls[3:], ':4:'),
    ('deleted', lambda ls: ls[:1] + ls[2:], ':2:'),
    ('reordered', lambda ls: [ls[0], ls[2], ls[1]] + ls[3:], ':2:'),
    ('first line deleted', lambda ls: ls[1:], ':1:'),
    ('line inserted', lambda ls: ls[:3] + ['{"prev_hash":"' + '0' * 64 + '","n":99}\n'] + ls[3:],
     ':4:'),
])
def test_an_edited_deleted_or_reordered_line_is_the_first_break(tmp_path, what, fn, where):
    paths = write_lines(tmp_path, 6)
    edit(paths[0], fn)
    report = verify_directory(tmp_path, KEY)
    assert not report.ok, what
    assert report.first_break.startswith(paths[0].name + where), (what, report.first_break)


def test_cutting_the_end_of_a_rotated_file_or_deleting_a_file_is_caught(tmp_path):
    paths = write_lines(tmp_path, 9, per_file=3)
    edit(paths[0], lambda ls: ls[:-1])
    report = verify_directory(tmp_path, KEY)
    assert not report.ok and report.first_break.startswith(paths[1].name + ':1:')
    paths = write_lines(tmp_path / 'b' if (tmp_path / 'b').mkdir() is None else None, 9, 3)
    paths[1].unlink()
    report = verify_directory(tmp_path / 'b', KEY)
    assert not report.ok and 'missing' in report.first_break


def test_a_re_signed_manifest_needs_the_key(tmp_path):
    write_lines(tmp_path, 3)
    manifest = next(tmp_path.glob('*.chain.json'))
    data = json.loads(manifest.read_text())
    data['files'][0]['anchor'] = 'f' * 64
    manifest.write_text(json.dumps(data))
    report = verify_directory(tmp_path, KEY)
    assert not report.ok and 'manifest signature' in report.first_break
    assert not verify_directory(tmp_path, b'another key of 32 bytes........').ok


def test_a_torn_last_line_is_a_warning_not_a_break(tmp_path):
    paths = write_lines(tmp_path, 3)
    with paths[0].open('ab') as handle:
        handle.write(b'{"prev_hash":"abc')
    report = verify_directory(tmp_path, KEY)
    assert report.ok and 'torn' in report.warnings[0]


def test_chain_key_is_created_owner_only_and_refused_when_readable(tmp_path):
    path = tmp_path / 'keys' / 'trace-chain.key'
    key = load_or_create_chain_key(path)
    assert len(key) == 32 and oct(path.stat().st_mode & 0o777) == '0o600'
    assert load_or_create_chain_key(path) == key
    os.chmod(path, 0o644)
    with pytest.raises(Exception, match='group or others'):
        load_or_create_chain_key(path)


def test_trace_verify_command_reports_the_first_broken_link(tmp_path):
    key_file = tmp_path / 'chain.key'
    key_file.write_text(KEY.hex() + '\n')
    os.chmod(key_file, 0o600)
    traces = tmp_path / 'traces'
    traces.mkdir()
    paths = write_lines(traces, 5)

    def verify():
        return subprocess.run([sys.executable, '-m', 'tool_router.cli', 'trace', 'verify',
                               str(traces), '--chain-key', str(key_file)],
                              capture_output=True, text=True, timeout=60)
    ok = verify()
    assert ok.returncode == 0 and 'chain intact: 5 records in 1 file(s)' in ok.stdout, ok
    edit(paths[0], lambda ls: ls[:3] + ls[4:])
    broken = verify()
    assert broken.returncode == 1
    assert f'first broken link: {paths[0].name}:4:' in broken.stdout, broken


def test_the_trace_writer_chains_its_lines_across_rotation_and_readers_see_plain_records(
        tmp_path):
    from test_trace_records import record
    from tool_router.executor.traces import TraceWriter, read_traces
    writer = TraceWriter(tmp_path, max_bytes=4096, fsync=False, chain_key=KEY)
    for i in range(12):
        writer.write(record(i))
    writer.close()
    files = sorted(tmp_path.glob('*.jsonl'))
    assert len(files) > 2  # rotated
    report = verify_directory(tmp_path, KEY)
    assert report.ok and report.records == 12, report
    assert [r.request_id for f in files for r in read_traces(f)] == [record(i).request_id
                                                                     for i in range(12)]
    lines = files[1].read_text().splitlines(keepends=True)
    files[1].write_text(''.join(lines[:1] + lines[2:]))
    assert verify_directory(tmp_path, KEY).first_break.startswith(files[1].name + ':2:')


def runs(directory, count, lines=3):
    """``count`` writer runs one after the other in ``directory`` (each names the one before)."""
    import time as _time
    stems = []
    for k in range(count):
        stem = f'executor-run{k}-1'
        write_lines(directory, lines, stem=stem)
        stems.append(stem)
        _time.sleep(0.01)  # distinct start times
    return stems


def delete_run(directory, stem):
    for path in directory.glob(f'{stem}*'):
        path.unlink()


def test_each_run_names_the_run_before_it_and_the_runs_verify_as_one_chain(tmp_path):
    stems = runs(tmp_path, 3)
    manifests = {json.loads(p.read_text())['stem']: json.loads(p.read_text())
                 for p in tmp_path.glob('*.chain.json')}
    assert manifests[stems[0]]['previous'] is None
    assert manifests[stems[1]]['previous']['stem'] == stems[0]
    assert manifests[stems[2]]['previous'] == {
        'stem': stems[1], 'records': 3,
        'tip': __import__('hashlib').sha256(
            (tmp_path / f'{stems[1]}-001.jsonl').read_bytes().splitlines(True)[-1]).hexdigest()}
    report = verify_directory(tmp_path, KEY)
    assert report.ok and report.manifests == 3 and report.records == 9, report


@pytest.mark.parametrize('which', [0, 1])
def test_deleting_any_run_but_the_newest_names_the_gap(tmp_path, which):
    stems = runs(tmp_path, 3)
    delete_run(tmp_path, stems[which])
    report = verify_directory(tmp_path, KEY)
    assert not report.ok
    assert f'the run before it, {stems[which]}, is missing' in report.first_break


def test_cutting_a_run_after_the_next_one_started_is_caught(tmp_path):
    stems = runs(tmp_path, 2)
    edit(tmp_path / f'{stems[0]}-001.jsonl', lambda ls: ls[:-1])
    report = verify_directory(tmp_path, KEY)
    assert not report.ok and report.first_break.startswith(f'{stems[0]}: cut or edited after')


def test_deleting_the_newest_run_is_the_one_deletion_verify_cannot_see(tmp_path):
    stems = runs(tmp_path, 3)
    delete_run(tmp_path, stems[2])
    assert verify_directory(tmp_path, KEY).ok  # documented limit (docs/SECURITY.md)


def test_a_folder_without_trace_files_is_an_error_not_an_intact_chain(tmp_path):
    report = verify_directory(tmp_path, KEY)
    assert not report.ok and 'no trace files' in report.first_break


def test_a_version_1_manifest_still_verifies(tmp_path):
    write_lines(tmp_path, 3, stem='executor-old-1')
    manifest_file = next(tmp_path.glob('*.chain.json'))
    data = json.loads(manifest_file.read_text())
    from tool_router.executor.chain import Manifest
    old = Manifest(version=1, stem=data['stem'], files=data['files'])
    import hashlib
    import hmac
    old.hmac = hmac.new(KEY, old.payload(), hashlib.sha256).hexdigest()
    manifest_file.write_text(old.model_dump_json())
    report = verify_directory(tmp_path, KEY)
    assert report.ok and report.records == 3, report
