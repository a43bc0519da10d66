"""Named places that conditions may name ("when you reach the north gate"), from a YAML file.

The file (shipped: ``config/places.yaml``, empty)::

    places:
      - name: north gate            # matched case-insensitively, "the " optional
        aliases: [gate 2]           # other names for the same point
        lat: 47.3990                # WGS84 degrees
        lon: 8.5470
        radius_m: 10                # how close counts as "reached" when no distance is given

A place a condition names is known only when it is in this file (or is home, the launch
point): an arrival at any other name is refused, never guessed at. The router and the executor
load the same file (``places_file`` in both configs), so the router's answer says what the
executor will do. Pure: no ROS.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.errors import ConfigError, first_problem
from tool_router.common.paths import config_path
from tool_router.common.yaml_util import line_of, load_yaml_with_lines

DEFAULT_RADIUS_M = 10.0


class Place(BaseModel):
    """One named point."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    name: str = Field(min_length=1, description='The name a request uses.')
    aliases: tuple[str, ...] = Field((), description='Other names of the same point.')
    lat: float = Field(ge=-90.0, le=90.0, description='Latitude, WGS84 degrees.')
    lon: float = Field(ge=-180.0, le=180.0, description='Longitude, WGS84 degrees.')
    radius_m: float = Field(DEFAULT_RADIUS_M, gt=0.0,
                            description='How close counts as arrived when no distance is given.')


class PlacesFile(BaseModel):
    """The places file."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    places: tuple[Place, ...] = ()


def place_key(name: str) -> str:
    """The form names are compared in: lower case, one space, no leading article."""
    text = ' '.join(re.sub(r'[^\w\s-]', ' ', name.lower()).split())
    return re.sub(r'^(?:the|a|an)\s+', '', text)


Places = Mapping[str, Place]


def index_places(places: tuple[Place, ...] | list[Place]) -> dict[str, Place]:
    """Name and alias keys -> place; ValueError when two places share a name."""
    out: dict[str, Place] = {}
    for place in places:
        for name in (place.name, *place.aliases):
            key = place_key(name)
            if key in out and out[key] != place:
                raise ValueError(f'the name {name!r} is given to two places')
            out[key] = place
    return out


def load_places(path: str | Path | None = None) -> dict[str, Place]:
    """The places of ``path`` (None or '' = the shipped ``config/places.yaml``), by name key.

    A malformed file raises :class:`ConfigError` naming the file and line.
    """
    path = Path(path) if path else config_path('places.yaml')
    data, node = load_yaml_with_lines(path, ConfigError)
    try:
        parsed = PlacesFile.model_validate(data or {})
    except pydantic.ValidationError as exc:
        problem = first_problem(exc)
        line = line_of(node, problem.loc)
        where = f'{path}:{line}' if line else str(path)
        raise ConfigError(f'{problem.field}: {problem.msg}', where=where) from None
    try:
        return index_places(parsed.places)
    except ValueError as exc:
        raise ConfigError(str(exc), where=str(path)) from None
