"""The policy registry: one line per policy drives the configuration, the router and the docs."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyword_policy import KeywordParams
from tool_router.routing.config import config_model, load_router_config
from tool_router.common.errors import ConfigError
from tool_router.routing.policies.registry import REGISTRY, PolicySpec
from tool_router.routing.router import Router

ROOT = Path(__file__).resolve().parent.parent

# The one registry line of the example policy (test/keyword_policy.py).
WITH_KEYWORD = REGISTRY.with_policies(PolicySpec('keyword', 'keyword_policy:build', KeywordParams))


def params_file(tmp_path, body):
    path = tmp_path / 'router.yaml'
    path.write_text('router_node:\n  ros__parameters:\n' + body, encoding='utf-8')
    return path


def test_a_registered_policy_is_configured_and_routed(tmp_path, fake_index):
    path = params_file(tmp_path, '    policy: keyword\n    chroma_ephemeral: true\n'
                                 '    keyword:\n      min_length: 4\n')
    config = load_router_config(path, registry=WITH_KEYWORD)
    assert config.keyword.min_length == 4
    with Router(config, index=fake_index) as router:
        result = router.route('switch the spotlight and the thermal camera on')
    assert result.policy == 'keyword' and 'spotlight' in result.tools
    assert 'thermal_camera' in result.tools


def test_a_registered_policys_section_rejects_misspelled_keys(tmp_path):
    path = params_file(tmp_path, '    keyword:\n      min_lenght: 4\n')
    with pytest.raises(ConfigError, match=r'router\.yaml:4: parameter keyword\.min_lenght'):
        load_router_config(path, registry=WITH_KEYWORD)
    with pytest.raises(ConfigError, match='keyword'):  # unknown to the shipped registry
        load_router_config(path)


def test_the_router_cuts_at_max_tools_and_reports_the_cut(fake_index):
    config = config_model(WITH_KEYWORD)(policy='keyword', chroma_ephemeral=True, max_tools=1)
    with Router(config, index=fake_index) as router:
        result = router.route('switch the spotlight and the thermal camera on')
    assert len(result.tools) == 1 and result.truncated
    why = result.explanation()
    assert why.truncated == result.truncated and why.max_tools == 1


def test_max_tools_above_the_catalog_size_names_the_field(fake_index):
    with pytest.raises(ConfigError, match='max_tools: 100'):
        Router(config_model(REGISTRY)(chroma_ephemeral=True, max_tools=100), index=fake_index)


def test_every_policy_is_in_the_docs_and_the_shipped_config():
    docs = (ROOT / 'docs' / 'POLICIES.md').read_text(encoding='utf-8')
    shipped = load_router_config()
    for name, where, section, _ in REGISTRY.table():
        assert f'`{name}`' in docs, name
        if section != '-':
            assert hasattr(shipped, section)
