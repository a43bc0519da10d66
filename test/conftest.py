"""Shared fixtures. Real parts: the shipped catalog, the MiniLM encoder, real Chroma, real DDS.

Two tiers (docs/TESTING.md): ``pytest -m "not slow"`` is the fast tier (pure
logic, the ``fake_*`` fixtures over a hashing encoder); the full suite is what
CI runs. A test is slow when it starts ROS or server processes (its module says
``pytestmark = pytest.mark.slow``) or when it needs MiniLM: any test whose
fixtures include ``encoder`` (directly or through ``index``/``router``) is
marked slow here automatically, so the fast tier never loads the model.

Every test session gets its own ROS domains (a lock file per domain id,
``tool_router/ros/domain.py``; an explicit ``ROS_DOMAIN_ID`` is kept) and keeps
DDS discovery on the loopback interface, so concurrent runs do not see each
other's nodes; each test module takes the next of the session's
``DOMAINS_PER_RUN`` domains, so it never meets what the modules before it left
in the DDS graph (nodes stopped or killed a moment ago linger there until their
lease runs out). Node processes started through ``test/procs.py`` are killed with
their whole process group when the session ends, is interrupted (Ctrl-C,
SIGTERM, SIGHUP) or the pytest process dies.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
os.environ.setdefault('MPLBACKEND', 'Agg')
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tool_router.ros.domain import private_domains  # noqa: E402

DOMAINS_PER_RUN = 8
DOMAINS = private_domains(DOMAINS_PER_RUN)
_modules = itertools.count()


def pytest_configure(config):
    import procs

    procs.install_interrupt_handlers()


def pytest_unconfigure(config):
    import procs

    procs.stop_all()


def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    for item in items:
        if 'encoder' in getattr(item, 'fixturenames', ()):
            item.add_marker(slow)


@pytest.fixture(scope='module', autouse=True)
def module_domain():
    """This module's ROS domain: the next of the session's (nodes it starts inherit it)."""
    domain = DOMAINS[next(_modules) % len(DOMAINS)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv('ROS_DOMAIN_ID', str(domain))
        yield domain


@pytest.fixture(scope='session')
def catalog():
    from tool_router.common.catalog import load_catalog

    return load_catalog(ROOT / 'config' / 'catalog.yaml')


@pytest.fixture(scope='session')
def encoder():
    from tool_router.routing.config import load_router_config
    from tool_router.routing.embeddings import SentenceTransformerEncoder

    # the shipped model (the fine-tuned MiniLM), on torch: what the fitted lcr expects
    return SentenceTransformerEncoder(load_router_config().model, 'cpu')


def shipped_router(index):
    """The shipped configuration over an in-memory index."""
    from tool_router.routing.config import load_router_config
    from tool_router.routing.router import Router

    return Router(load_router_config(overrides={'chroma_ephemeral': True}), index=index)


@pytest.fixture(scope='session')
def index(catalog, encoder):
    from tool_router.routing.index import CatalogIndex

    return CatalogIndex.ephemeral(catalog, encoder)


@pytest.fixture(scope='session')
def router(index):
    return shipped_router(index)


@pytest.fixture(scope='session')
def fake_encoder():
    """A hashing bag-of-words encoder: same interface as MiniLM, milliseconds to run."""
    from fakes import HashingEncoder

    return HashingEncoder()


@pytest.fixture(scope='session')
def fake_index(catalog, fake_encoder):
    from tool_router.routing.index import CatalogIndex

    return CatalogIndex.ephemeral(catalog, fake_encoder)


@pytest.fixture(scope='session')
def fake_router(fake_index):
    """The shipped configuration over the fake encoder: for logic, not routing quality."""
    return shipped_router(fake_index)


@pytest.fixture
def ros_home(tmp_path, monkeypatch):
    monkeypatch.setenv('ROS_HOME', str(tmp_path / 'ros_home'))
    return tmp_path / 'ros_home'
