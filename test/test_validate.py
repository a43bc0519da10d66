"""The allowlist validator: nothing outside the catalog ever leaves the router."""

from tool_router.routing.validate import validate_selection


def test_invented_names_are_dropped_and_reported(catalog):
    out = validate_selection(
        ['land', 'fly_to_moon', 'rm -rf /', 'takeoff'], [0.9, 0.8, 0.7, 0.6], catalog, 8
    )
    assert out.tools == ['land', 'takeoff']
    assert out.scores == [0.9, 0.6]
    assert out.dropped == ['fly_to_moon', 'rm -rf /']


def test_duplicates_removed_first_kept(catalog):
    out = validate_selection(['land', 'land', 'takeoff'], [0.5, 0.9, 0.4], catalog, 8)
    assert out.tools == ['land', 'takeoff'] and out.scores == [0.5, 0.4]
    assert out.duplicates == ['land']


def test_max_tools_bound(catalog):
    out = validate_selection(list(catalog.names), None, catalog, 3)
    assert out.tools == list(catalog.names[:3])
    assert len(out.truncated) == 39
    assert out.scores == [0.0, 0.0, 0.0]


def test_non_string_names_are_dropped(catalog):
    out = validate_selection([None, 3, 'land'], [1, 1, 1], catalog, 8)
    assert out.tools == ['land'] and out.dropped == ['None', '3']
