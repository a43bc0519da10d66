"""Tamper-evident trace files: a hash chain over the JSONL lines, anchored in a signed manifest.

Each line the :class:`~tool_router.executor.traces.TraceWriter` writes starts with
``{"prev_hash":"<sha256 of the previous line of the chain>",`` followed by the record's
own fields (readers strip it with :func:`strip_link`). The first line of a writer's
first file links to a random anchor; the first line of every later file (rotation)
links to the last line of the file before, so the chain runs across files. The
manifest ``<stem>.chain.json`` lists the writer's files with the anchor each starts
from and carries an HMAC-SHA256 under the executor's chain key (a 0600 key file, see
:mod:`tool_router.common.signing`), so nobody without the key can re-anchor an edited file.

Runs are chained too: a writer that starts in a directory holding an earlier run names that
run in its manifest (``previous``: its stem, how many lines it had and the digest of its last
one), so the runs of a directory form one signed chain from the first.

:func:`verify_directory` recomputes everything and reports the first broken link:
an edited line breaks the link of the line after it, a deleted or reordered line
breaks its successor's link, a deleted file breaks the next file's anchor, a deleted run
breaks the run after it (which names it), a run cut after the next one began breaks that
one. A directory with no trace file is an error, not an intact chain. What it cannot see:
lines cut from the end of the newest run (nothing follows them), the newest run deleted
whole, and a rewrite by someone holding the chain key.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import ConfigError

DOMAIN = 'tool_router/trace-chain/v1'
PREFIX = b'{"prev_hash":"'
LINK = re.compile(r'^\{"prev_hash":"([0-9a-f]{64})",')


def digest(line: bytes) -> str:
    """sha256 of one complete line (its newline included), hex."""
    return hashlib.sha256(line).hexdigest()


def strip_link(line: str) -> str:
    """The record's JSON without the chain field (unchanged when the line has none)."""
    return LINK.sub('{', line, count=1)


class FileEntry(BaseModel):
    """One trace file of a writer and the hash its first line links to."""

    model_config = ConfigDict(extra='forbid')

    file: str = Field(description='File name, in the manifest directory.')
    anchor: str = Field(description='prev_hash the first line must carry.')


class PreviousRun(BaseModel):
    """The run a writer found in its directory when it started, as it was then."""

    model_config = ConfigDict(extra='forbid')

    stem: str = Field(description='The earlier run (its manifest is <stem>.chain.json).')
    records: int = Field(ge=0, description='Lines of its chain when this run started.')
    tip: str = Field(description='Digest of its last line then (what it ended with).')


class Manifest(BaseModel):
    """The files of one writer, in order, and the run before it, signed."""

    model_config = ConfigDict(extra='forbid')

    version: int = 2
    stem: str
    started: float = Field(0.0, description='When the writer started (seconds since epoch).')
    previous: PreviousRun | None = Field(None, description='None: the first run of the '
                                                           'directory (or a version 1 file).')
    files: list[FileEntry] = Field(default_factory=list)
    hmac: str = ''

    def payload(self) -> bytes:
        """The bytes the HMAC covers (version 1: without the run fields)."""
        body: dict[str, object] = {'version': self.version, 'stem': self.stem,
                                   'files': [f.model_dump() for f in self.files]}
        if self.version >= 2:
            body['started'] = self.started
            body['previous'] = self.previous.model_dump() if self.previous else None
        return (DOMAIN + '\n' + json.dumps(body, sort_keys=True)).encode('utf-8')


def manifest_path(directory: Path, stem: str) -> Path:
    """Where a writer's manifest lives."""
    return directory / f'{stem}.chain.json'


class TraceChain:
    """Links each line to the one before and keeps the writer's manifest (thread-safe).

    The run before it in ``directory`` (the newest manifest there that verifies under
    ``key``) is named in the manifest, as it is now.
    """

    def __init__(self, directory: str | Path, stem: str, key: bytes) -> None:
        self.directory = Path(directory)
        self._key = key
        self.manifest = Manifest(stem=stem, started=time.time(),
                                 previous=latest_run(self.directory, key))
        self._last = digest(f'{DOMAIN}\n{stem}\n{secrets.token_hex(16)}\n'.encode())
        self._lock = threading.Lock()

    def start_file(self, path: Path) -> None:
        """A new file begins: its first line links to the last line written (or the anchor)."""
        with self._lock:
            self.manifest.files.append(FileEntry(file=path.name, anchor=self._last))
            self.manifest.hmac = ''
            self.manifest.hmac = hmac.new(self._key, self.manifest.payload(),
                                          hashlib.sha256).hexdigest()
            target = manifest_path(self.directory, self.manifest.stem)
            tmp = target.with_name(target.name + '.tmp')
            tmp.write_text(self.manifest.model_dump_json() + '\n', encoding='utf-8')
            os.replace(tmp, target)

    @property
    def last(self) -> str:
        """Digest of the last sealed line (what the next line links to)."""
        return self._last

    def rewind(self, last: str) -> None:
        """Forget a sealed line that never reached the file (a failed write)."""
        with self._lock:
            self._last = last

    def seal(self, line: bytes) -> bytes:
        """``line`` (one JSON object and a newline) with the link to the previous line."""
        if not line.startswith(b'{'):
            raise ValueError('a trace line must be a JSON object')
        with self._lock:
            out = PREFIX + self._last.encode() + b'",' + line[1:]
            if line[1:2] == b'}':  # an empty object: no comma
                out = PREFIX + self._last.encode() + b'"' + line[1:]
            self._last = digest(out)
            return out


class ChainReport(BaseModel):
    """What :func:`verify_directory` found."""

    model_config = ConfigDict(extra='forbid')

    ok: bool
    manifests: int = 0
    files: int = 0
    records: int = 0
    first_break: str = Field('', description="'' or file:line and what is wrong.")
    warnings: list[str] = Field(default_factory=list)


def _read_manifest(path: Path, key: bytes) -> Manifest | str:
    """A manifest that verifies under ``key``, or what is wrong with it."""
    try:
        manifest = Manifest.model_validate_json(path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as exc:
        return f'{path.name}: unreadable manifest ({exc.__class__.__name__})'
    expected = hmac.new(key, manifest.payload(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, manifest.hmac):
        return f'{path.name}: manifest signature does not match the key'
    return manifest


def _run_lines(directory: Path, manifest: Manifest) -> list[str]:
    """Digests of a run's complete, linked lines, in chain order (no verification)."""
    out: list[str] = []
    for entry in manifest.files:
        try:
            with (directory / entry.file).open('rb') as handle:
                out += [digest(line) for line in handle if line.endswith(b'\n')]
        except OSError:
            continue
    return out


def latest_run(directory: Path, key: bytes) -> PreviousRun | None:
    """The newest run of ``directory`` that verifies under ``key``, as it is now (None: none)."""
    runs = []
    for path in directory.glob('*.chain.json'):
        manifest = _read_manifest(path, key)
        if isinstance(manifest, Manifest):
            runs.append(manifest)
    if not runs:
        return None
    newest = max(runs, key=lambda m: (m.started, m.stem))
    lines = _run_lines(directory, newest)
    tip = lines[-1] if lines else newest.files[0].anchor if newest.files else ''
    return PreviousRun(stem=newest.stem, records=len(lines), tip=tip)


def verify_directory(directory: str | Path, key: bytes) -> ChainReport:
    """Check every manifest of ``directory``, the chain of every file and of the runs."""
    directory = Path(directory)
    report = ChainReport(ok=True)
    listed: set[str] = set()
    manifests: dict[str, Manifest] = {}
    for mpath in sorted(directory.glob('*.chain.json')):
        report.manifests += 1
        manifest = _read_manifest(mpath, key)
        if isinstance(manifest, str):
            return _broken(report, manifest)
        manifests[manifest.stem] = manifest
        previous = ''
        for number, entry in enumerate(manifest.files):
            listed.add(entry.file)
            path = directory / entry.file
            if number and entry.anchor != previous:
                return _broken(report, f'{entry.file}:1: the file before it ends differently '
                                       'than when this file was started (lines cut or edited)')
            if not path.exists():
                if number == len(manifest.files) - 1:  # writer stopped before creating it
                    report.warnings.append(f'{entry.file}: listed last in {mpath.name}, never '
                                           'written')
                    continue
                return _broken(report, f'{entry.file}: listed in {mpath.name} but missing')
            report.files += 1
            problem, previous, count = _verify_file(path, entry.anchor, report)
            report.records += count
            if problem:
                return _broken(report, problem)
    problem = _verify_runs(directory, manifests)
    if problem:
        return _broken(report, problem)
    unlisted = [p.name for p in sorted(directory.glob('*.jsonl')) if p.name not in listed]
    for name in unlisted:
        report.warnings.append(f'{name}: not in any manifest (written without a chain)')
    if not manifests and not unlisted:
        return _broken(report, f'{directory}: no trace files (nothing to verify)')
    return report


def _verify_runs(directory: Path, manifests: dict[str, Manifest]) -> str:
    """'' when every run names the run before it as it was then; else the first gap."""
    firsts = [m.stem for m in manifests.values() if m.previous is None and m.version >= 2]
    if len(firsts) > 1:
        return (f'{len(firsts)} runs start a chain ({", ".join(sorted(firsts))}): the runs '
                'between them were deleted, or the directory was assembled from several')
    for manifest in sorted(manifests.values(), key=lambda m: (m.started, m.stem)):
        before = manifest.previous
        if before is None:
            continue
        earlier = manifests.get(before.stem)
        if earlier is None:
            return (f'{manifest.stem}.chain.json: the run before it, {before.stem}, is '
                    'missing (deleted)')
        lines = _run_lines(directory, earlier)
        at = lines[before.records - 1] if 0 < before.records <= len(lines) else None
        if before.records and at != before.tip:
            return (f'{before.stem}: cut or edited after {manifest.stem} started (it had '
                    f'{before.records} lines then, {len(lines)} now)')
    return ''


def _verify_file(path: Path, anchor: str, report: ChainReport) -> tuple[str, str, int]:
    """(problem or '', digest of the last line, lines checked)."""
    expected, count = anchor, 0
    with path.open('rb') as handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith(b'\n'):
                report.warnings.append(f'{path.name}:{number}: torn last line (writer killed); '
                                       'not part of the chain')
                break
            match = LINK.match(line.decode('utf-8', errors='replace'))
            if match is None:
                return f'{path.name}:{number}: line has no chain link', expected, count
            if match.group(1) != expected:
                what = 'first line does not start from the manifest anchor' if number == 1 else \
                    'link does not match the line before (this or an earlier line edited, ' \
                    'deleted or moved)'
                return f'{path.name}:{number}: {what}', expected, count
            expected = digest(line)
            count += 1
    return '', expected, count


def _broken(report: ChainReport, where: str) -> ChainReport:
    report.ok = False
    report.first_break = where
    return report


def default_chain_key_file() -> Path:
    """``$ROS_HOME/tool_router/keys/trace-chain.key``."""
    from tool_router.common.paths import ros_home

    return ros_home() / 'tool_router' / 'keys' / 'trace-chain.key'


def load_or_create_chain_key(path: Path) -> bytes:
    """The executor's chain key (created 0600 when missing; refused when others can read it)."""
    from tool_router.common.signing import read_key, write_key

    if not path.exists():
        try:
            write_key(path)
        except FileExistsError:
            pass
        except OSError as exc:
            raise ConfigError(f'cannot create the trace chain key: {exc.strerror}',
                              where=str(path)) from None
    try:
        return read_key(path)
    except ConfigError:
        time.sleep(0.2)  # another executor may be writing the key it just created
        return read_key(path)
