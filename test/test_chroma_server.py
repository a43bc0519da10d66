"""Client/server mode: a real `chroma run` on 127.0.0.1 holds the shared catalog index."""

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tool_router.routing.config import RouterConfig
from tool_router.routing.router import Router

pytestmark = pytest.mark.slow  # starts ROS or server processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def chroma_server(tmp_path_factory):
    exe = shutil.which('chroma') or str(Path(sys.executable).parent / 'chroma')
    port = free_port()
    data = tmp_path_factory.mktemp('chroma-server')
    proc = subprocess.Popen(
        [exe, 'run', '--path', str(data), '--host', '127.0.0.1', '--port', str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f'http://127.0.0.1:{port}'
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f'{url}/api/v2/heartbeat', timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail(
            'chroma server did not start: ' + proc.stdout.read().decode(errors='replace')[-2000:]
        )
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def test_router_over_a_chroma_server(chroma_server, catalog, encoder):
    config = RouterConfig(chroma_url=chroma_server, chroma_prefix='server-test')
    first = Router(config, catalog=catalog, encoder=encoder)
    assert set(first.index.state.values()) == {'built'}
    result = first.route('monitor the battery and land when it drops below 25%', 'cdbv3')
    assert 'battery_status' in result.tools
    second = Router(
        config, catalog=catalog, encoder=encoder
    )  # another vehicle process, same server
    assert set(second.index.state.values()) == {'reused'}
    assert (
        second.route('monitor the battery and land when it drops below 25%', 'cdbv3').tools
        == result.tools
    )


def test_unreachable_server_is_a_clear_error(catalog, encoder):
    from tool_router.common.errors import IndexStoreError

    with pytest.raises(IndexStoreError):
        Router(
            RouterConfig(chroma_url=f'http://127.0.0.1:{free_port()}'),
            catalog=catalog,
            encoder=encoder,
        )
