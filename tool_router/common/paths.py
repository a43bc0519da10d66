"""Where the package's shipped files live, in a source checkout or an install."""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Callable

PACKAGE = 'tool_router'
log = logging.getLogger(__name__)


def share_dir() -> Path:
    """The directory holding ``config/`` and ``launch/``.

    Order: ``$TOOL_ROUTER_SHARE``; the source checkout this module sits in; the
    ament share directory of an install (``<prefix>/share/tool_router``).
    """
    env = os.environ.get('TOOL_ROUTER_SHARE')
    if env:
        return Path(env)
    source = Path(__file__).resolve().parents[2]  # tool_router/common/paths.py -> checkout
    if (source / 'config' / 'catalog.yaml').exists():
        return source
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory(PACKAGE))
    except Exception:  # noqa: BLE001 - ament index missing or package not registered
        return Path(sys.prefix) / 'share' / PACKAGE


def config_path(name: str) -> Path:
    """A shipped configuration file (``config/<name>``)."""
    return share_dir() / 'config' / name


def ros_home() -> Path:
    """``$ROS_HOME`` or ``~/.ros``, as for ROS logs."""
    return Path(os.environ.get('ROS_HOME') or Path.home() / '.ros')


def write_cache_file(path: Path, save: Callable[[Path], None], what: str) -> None:
    """Write a cache file whole or not at all, best effort.

    ``save(tmp)`` writes a temporary sibling (with ``path``'s suffix, so numpy adds none),
    which then replaces ``path``: a concurrent start reads the old file or the new one,
    never a torn one. An ``OSError`` (a read-only cache) is logged as ``cannot write
    <what> <path>`` and costs only the next start its time.
    """
    tmp = path.with_name(f'{path.stem}.tmp{os.getpid()}{path.suffix}')
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        log.warning('cannot write %s %s: %s', what, path, exc)
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # e.g. the directory itself could not be made
            pass
