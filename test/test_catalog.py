"""Catalog loading and validation."""

from pathlib import Path

import pytest
import yaml

from tool_router.common.catalog import Kind, Risk, load_catalog
from tool_router.common.errors import CatalogError

SOURCE = Path(__file__).resolve().parents[2] / 'shared' / 'catalog' / 'drone_tools.yaml'


def write(tmp_path, data) -> Path:
    path = tmp_path / 'catalog.yaml'
    path.write_text(yaml.safe_dump(data, sort_keys=False) if not isinstance(data, str) else data)
    return path


def minimal_tool(name='land', **kw):
    tool = {
        'name': name,
        'kind': 'actuator',
        'risk': 'motion',
        'summary': 'Lands.',
        'description': 'Descends and lands at the current position.',
    }
    tool.update(kw)
    return tool


def test_shipped_catalog_has_the_42_tools(catalog):
    assert len(catalog) == 42
    assert len(set(catalog.names)) == 42
    assert sum(t.kind is Kind.SENSOR for t in catalog) == 20
    assert catalog.get('emergency_stop').risk is Risk.CRITICAL
    assert all(t.examples for t in catalog), 'every tool has example phrasings'


@pytest.mark.skipif(not SOURCE.exists(), reason='shared catalog not beside the checkout')
def test_shipped_catalog_matches_the_source_names_kinds_and_risks(catalog):
    source = yaml.safe_load(SOURCE.read_text())['tools']
    assert [(t['name'], t['kind'], t['risk']) for t in source] == [
        (t.name, t.kind.value, t.risk.value) for t in catalog
    ]


def test_duplicate_name_is_rejected(tmp_path):
    path = write(tmp_path, {'version': 1, 'tools': [minimal_tool(), minimal_tool()]})
    with pytest.raises(CatalogError, match='duplicate tool name'):
        load_catalog(path)


def test_duplicate_names_the_line_of_the_second_entry(tmp_path):
    text = (
        'version: 1\ntools:\n'
        '  - {name: land, kind: actuator, risk: motion, summary: a, description: b}\n'
        '  - {name: takeoff, kind: actuator, risk: motion, summary: a, description: b}\n'
        '  - name: land\n    kind: actuator\n    risk: motion\n'
        '    summary: a\n    description: b\n'
    )
    with pytest.raises(CatalogError) as err:
        load_catalog(write(tmp_path, text))
    message = str(err.value)
    assert ':5:' in message and "'land'" in message and 'line 3' in message


def test_unknown_risk_names_the_line_and_tool(tmp_path):
    text = (
        'version: 1\ntools:\n'
        '  - {name: land, kind: actuator, risk: motion, summary: a, description: b}\n'
        '  - name: takeoff\n    kind: actuator\n    risk: dangerous\n'
        '    summary: a\n    description: b\n'
    )
    with pytest.raises(CatalogError) as err:
        load_catalog(write(tmp_path, text))
    message = str(err.value)
    assert ':6:' in message and 'risk' in message and "'takeoff'" in message


@pytest.mark.parametrize(
    'change, pattern',
    [
        ({'summary': '   '}, 'blank'),
        ({'kind': 'robot'}, 'kind'),
        ({'name': 'Land Now'}, 'lower_snake_case'),
        ({'colour': 'red'}, 'colour'),
        ({'conditions': ['when it lands']}, 'only allowed on sensors'),
        ({'examples': ['ok', '']}, 'empty entry'),
    ],
)
def test_bad_tool_fields_are_clear_errors(tmp_path, change, pattern):
    path = write(tmp_path, {'version': 1, 'tools': [minimal_tool(**change)]})
    with pytest.raises(CatalogError, match=pattern):
        load_catalog(path)


@pytest.mark.parametrize(
    'text, pattern',
    [
        ('tools: [unclosed', 'invalid YAML'),
        ('- just a list', 'top level'),
        ('version: 1\ntools: []\n', 'at least 1'),
    ],
)
def test_malformed_files(tmp_path, text, pattern):
    with pytest.raises(CatalogError, match=pattern):
        load_catalog(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(CatalogError, match='not found'):
        load_catalog(tmp_path / 'nope.yaml')


def test_content_hash_changes_with_content(tmp_path):
    a = load_catalog(write(tmp_path, {'version': 1, 'tools': [minimal_tool()]}))
    b = load_catalog(
        write(tmp_path, {'version': 1, 'tools': [minimal_tool(description='Other text.')]})
    )
    assert a.content_hash() != b.content_hash()
    assert (
        a.content_hash()
        == load_catalog(write(tmp_path, {'version': 1, 'tools': [minimal_tool()]})).content_hash()
    )
