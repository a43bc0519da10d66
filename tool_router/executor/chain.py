"""Tamper-evident trace files: a hash chain over the JSONL lines, anchored in a signed manifest.

Each line the :class:`~tool_router.executor.traces.TraceWriter` writes starts with
``{"prev_hash":"<sha256 of the previous line of the chain>",`` followed by the record's
own fields (readers strip it with :func:`strip_link`). The first line of a writer's
first file links to a random anchor; the first line of every later file (rotation)
links to the last line of the file before, so the chain runs across files. The
manifest ``<stem>.chain.json`` lists the writer's files with the anchor each starts
from and carries an HMAC-SHA256 under the executor's chain key (a 0600 key file, see
:mod:`.auth`), so nobody without the key can re-anchor an edited file.

:func:`verify_directory` recomputes everything and reports the first broken link:
an edited line breaks the link of the line after it, a deleted or reordered line
breaks its successor's link, a deleted file breaks the next file's anchor. What it
cannot see: lines cut from the end of the newest file (nothing follows them) and a
rewrite by someone holding the chain key.
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


class Manifest(BaseModel):
    """The files of one writer, in order, signed."""

    model_config = ConfigDict(extra='forbid')

    version: int = 1
    stem: str
    files: list[FileEntry] = Field(default_factory=list)
    hmac: str = ''

    def payload(self) -> bytes:
        """The bytes the HMAC covers."""
        body = {'version': self.version, 'stem': self.stem,
                'files': [f.model_dump() for f in self.files]}
        return (DOMAIN + '\n' + json.dumps(body, sort_keys=True)).encode('utf-8')


def manifest_path(directory: Path, stem: str) -> Path:
    """Where a writer's manifest lives."""
    return directory / f'{stem}.chain.json'


class TraceChain:
    """Links each line to the one before and keeps the writer's manifest (thread-safe)."""

    def __init__(self, directory: str | Path, stem: str, key: bytes) -> None:
        self.directory = Path(directory)
        self._key = key
        self.manifest = Manifest(stem=stem)
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


def verify_directory(directory: str | Path, key: bytes) -> ChainReport:
    """Check every manifest of ``directory`` and the chain of every file it lists."""
    directory = Path(directory)
    report = ChainReport(ok=True)
    listed: set[str] = set()
    for mpath in sorted(directory.glob('*.chain.json')):
        report.manifests += 1
        try:
            manifest = Manifest.model_validate_json(mpath.read_text(encoding='utf-8'))
        except (OSError, ValueError) as exc:
            return _broken(report, f'{mpath.name}: unreadable manifest ({exc.__class__.__name__})')
        expected = hmac.new(key, manifest.payload(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, manifest.hmac):
            return _broken(report, f'{mpath.name}: manifest signature does not match the key')
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
    for path in sorted(directory.glob('*.jsonl')):
        if path.name not in listed:
            report.warnings.append(f'{path.name}: not in any manifest (written without a chain)')
    return report


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
