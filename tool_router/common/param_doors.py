"""Which node parameters may change at run time, and which names a node refuses at start.

Pure logic (no rclpy). A ROS 2 node's parameter services (``set_parameters``,
``set_parameters_atomically``) are open to every process on the DDS domain; without SROS2
they need no key. So a parameter that changes what is routed or executed (policy sections,
``policy``, ``max_tools``, ``mode``, bindings, time-outs, TTLs, rate limits, key paths, URLs,
``use_sim_time``) is **fixed at start**: it is read from the params file (or ``-p``) when
the node starts and refused at run time. Only what cannot change a decision stays writable.

Each node has one :class:`Doors` table (``ROUTER_DOORS`` in
:mod:`tool_router.routing.config`, ``EXECUTOR_DOORS`` in :mod:`tool_router.executor.config`);
a name in neither of its sets is refused too (closed by default), and
``test/test_param_doors.py`` checks that every declared parameter is in one of them.
docs/SECURITY.md, "Parameters: fixed at start", has the table as measured over DDS.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable

# Declared by rclpy itself on every node (``start_type_description_service`` is already
# read-only there). Both may be given at start; neither may change at run time: a switch of
# use_sim_time freezes the node's clock until someone publishes /clock.
ROS_OWN = frozenset({'use_sim_time', 'start_type_description_service'})

# The supported way to change a fixed parameter: the reason every refusal gives.
RESTART = 'restart the node with a params file (--ros-args --params-file FILE, or -p NAME:=VALUE)'


def flatten(values: dict[str, Any], prefix: str = '') -> list[str]:
    """Dotted parameter names of a nested dict (``llm.url``, ...)."""
    names: list[str] = []
    for key, value in values.items():
        if isinstance(value, dict):
            names += flatten(value, f'{prefix}{key}.')
        else:
            names.append(f'{prefix}{key}')
    return names


def set_dotted(tree: dict[str, Any], name: str, value: Any) -> None:
    """Set the dotted ``name`` (``llm.url``) in the nested dict ``tree``, making sections.

    A section that is not a dict (a value where a section was expected) takes nothing: the
    value is dropped, and validation reports the name if it matters.
    """
    target = tree
    *parents, leaf = name.split('.')
    for part in parents:
        nested = target.setdefault(part, {})
        target = nested if isinstance(nested, dict) else {}
    target[leaf] = value


def named_with_close_match(names: Iterable[str], known: Iterable[str]) -> str:
    """``'polcy' (did you mean 'policy'?), 'zzz'``: each name, with its closest known one."""
    candidates = sorted(known)
    parts = []
    for name in names:
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
        parts.append(f'{name!r} (did you mean {close[0]!r}?)' if close else repr(name))
    return ', '.join(parts)


def section(name: str) -> str:
    """The top-level part of a dotted parameter name (``llm`` of ``llm.url``)."""
    return name.split('.', 1)[0]


@dataclass(frozen=True)
class Doors:
    """One node's parameters: those writable at run time and those fixed at start.

    Entries are full dotted names or top-level names; a top-level name covers its section
    (``bindings`` covers ``bindings.land``). ``writable`` wins over ``fixed`` only for an
    exact dotted name (not used by the shipped tables).
    """

    node: str
    writable: frozenset[str]
    fixed: frozenset[str]
    # fixed names an operator of role admin may still change while the node runs, signed
    # (top-level names; the router's: routing/signed_config.py): the refusal says how
    signed: frozenset[str] = frozenset()

    def _in(self, name: str, names: frozenset[str]) -> bool:
        return name in names or section(name) in names

    def is_writable(self, name: str) -> bool:
        """Whether ``name`` may change at run time (an unclassified name may not)."""
        return name in self.writable or (section(name) in self.writable
                                          and name not in self.fixed)

    def classified(self, name: str) -> bool:
        """Whether the table says anything about ``name``."""
        return self._in(name, self.writable) or self._in(name, self.fixed)

    def refusal(self, names: Iterable[str]) -> str:
        """'' when every name may change now; else the reason the whole change is refused."""
        fixed = sorted({n for n in names if not self.is_writable(n)})
        if not fixed:
            return ''
        unclassified = [n for n in fixed if not self.classified(n)]
        what = ', '.join(fixed)
        verb = 'is' if len(fixed) == 1 else 'are'
        note = ' (not in its table: refused by default)' if unclassified else ''
        also = ''
        if all(section(n) in self.signed for n in fixed):
            also = (f', or while it runs by an admin\'s signed `tool-router config set '
                    f'{fixed[0]}=VALUE --operator NAME`')
        return (f'{what} {verb} fixed at start on {self.node}{note}: the parameter service is '
                f'open to the network, so nothing that changes routing or execution is set '
                f'through it at run time; {RESTART}{also}')

    def descriptor_note(self, name: str) -> str:
        """The ``additional_constraints`` text of a declared parameter's descriptor."""
        if self.is_writable(name):
            return 'writable at run time'
        return f'read-only at run time (fixed at start): {RESTART}'


def unknown_names(given: Iterable[str], known: Iterable[str],
                  open_sections: Iterable[str] = ()) -> list[str]:
    """Names of ``given`` the node does not know (its own, rclpy's or an open section's).

    An open section takes any sub-name: ``bindings.my_tool`` binds a tool of a custom
    catalog that the shipped defaults do not bind.
    """
    known_set = set(known) | ROS_OWN
    opened = set(open_sections)
    return sorted(n for n in set(given)
                  if n not in known_set and not ('.' in n and section(n) in opened))


def unknown_problem(node: str, unknown: list[str], known: Iterable[str]) -> str:
    """One line naming each unknown parameter and its closest known name, if one is close."""
    noun = 'parameter' if len(unknown) == 1 else 'parameters'
    return (f'unknown {noun} {named_with_close_match(unknown, set(known) | ROS_OWN)}: {node} '
            'refuses to start on a name it does not know (a misspelt one would silently keep '
            'its default)')
