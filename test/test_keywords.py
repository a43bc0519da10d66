"""KeywordMatcher finds exactly what one regular expression per tool found (fast tier)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

from tool_router.common.catalog import load_catalog
from tool_router.routing.keywords import KeywordMatcher
from tool_router.common.paths import config_path
from tool_router.routing.policies.base import words

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))
import catalog_gen  # noqa: E402


def per_tool_regex(keywords, text):
    """The former lcr code: one \\b(?:kw|...)\\b expression per tool."""
    out = {}
    for j, kws in enumerate(keywords):
        if kws:
            found = re.compile(r'\b(?:' + '|'.join(map(re.escape, kws)) + r')\b').findall(text)
            if found:
                out[j] = found
    return out


def test_hits_equal_the_per_tool_search_on_the_catalog_and_dev_requests():
    catalog = load_catalog(config_path('catalog.yaml'))
    keywords = [t.keywords for t in catalog]
    names = [set(t.name.split('_')) for t in catalog]
    matcher = KeywordMatcher(keywords, names)
    lines = (ROOT / 'benchmarks' / 'data' / 'dev.jsonl').read_text().splitlines()
    texts = [json.loads(line)['request'].lower() for line in lines]
    # Keywords inside other words, overlapping keywords, punctuation in keywords.
    texts += ['the e-stop now', 'battery battery level', 'kmh km/h km/hour', 'pre-flightcheck',
              'take-off then takeoff', 'lat/long of home', '']
    seen = 0
    for text in texts:
        expected = per_tool_regex(keywords, text)
        assert matcher.hits(text) == expected, text
        seen += bool(expected)
        req = set(words(text))
        assert matcher.named(req).tolist() == [bool(n & req) for n in names], text
    assert seen > len(texts) // 4  # the comparison saw many hits, not only empty answers


def test_keywords_not_starting_with_a_word_character_and_no_keywords():
    keywords = [['+5v rail', 'rail'], [], ['rail']]
    matcher = KeywordMatcher(keywords, [{'a'}, {'b'}, set()])
    # \b before '+' needs a word character before it, as in the per-tool expression.
    assert matcher.hits('check the +5v rail') == {0: ['rail'], 2: ['rail']}
    assert matcher.hits('check x+5v rail') == {0: ['+5v rail'], 2: ['rail']}
    for text in ('check the +5v rail', 'check x+5v rail', 'railway'):
        assert matcher.hits(text) == per_tool_regex(keywords, text)
    assert matcher.hits('nothing here') == {}
    assert matcher.named(['b', 'x']).tolist() == [False, True, False]


def test_a_generated_5000_tool_catalog_matches_the_per_tool_search(tmp_path):
    path = catalog_gen.write(5000, tmp_path / 'big.yaml', config_path('catalog.yaml'))
    catalog = load_catalog(path)
    keywords = [t.keywords for t in catalog]
    matcher = KeywordMatcher(keywords)
    for text in ['turn on the winch 3 and read the lidar 12', 'gimbal unit 7: calibrate',
                 'land now', 'sonar 140 sonar unit 140']:
        assert matcher.hits(text) == per_tool_regex(keywords, text)
    assert len(matcher.hits('read the lidar 12')) >= 1
    assert np.count_nonzero(matcher.named([])) == 0
