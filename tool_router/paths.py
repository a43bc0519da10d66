"""Where the package's shipped files live, in a source checkout or an install."""
from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = 'tool_router'


def share_dir() -> Path:
    """The directory holding ``config/`` and ``launch/``.

    Order: ``$TOOL_ROUTER_SHARE``; the source checkout this module sits in; the
    ament share directory of an install (``<prefix>/share/tool_router``).
    """
    env = os.environ.get('TOOL_ROUTER_SHARE')
    if env:
        return Path(env)
    source = Path(__file__).resolve().parent.parent
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
