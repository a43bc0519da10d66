"""Check the import graph of tool_router: no cycle, and every arrow between allowed layers.

    python scripts/import_graph.py          # prints the cycles / forbidden arrows; exit 1 if any

Every ``import`` counts, also those inside functions (a lazy import is still an
arrow); imports under ``if TYPE_CHECKING:`` do not (they never run). The layers
(:data:`ALLOWED`): ``common`` imports nothing of ours; ``routing`` and ``executor``
import ``common`` and never each other; ``sim`` imports ``common``; ``evaluation``
imports ``common`` and ``routing``; ``ros`` (the nodes) anything but the CLI; the
CLI anything. Only ``ros`` and ``cli`` import the generated interfaces
(``tool_router.msg``, ``tool_router.srv``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'tool_router'


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and 'TYPE_CHECKING' in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob('*.py')}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        is_pkg = path.name == '__init__.py'
        for node in _runtime_nodes(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ''
                if node.level:
                    anchor = name.split('.') if is_pkg else name.split('.')[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = '.'.join(anchor + ([base] if base else []))
                targets = [base] + [f'{base}.{a.name}' for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition('.')[0]
                if target and target != name and target in modules:
                    edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


# Which layer may import which (its own always): the layout of docs/ARCHITECTURE.md.
ALLOWED: dict[str, set[str]] = {
    'common': set(),
    'routing': {'common'},
    'executor': {'common'},
    'sim': {'common'},
    'evaluation': {'common', 'routing'},
    'ros': {'common', 'routing', 'executor', 'sim', 'evaluation', 'interfaces'},
    'cli': {'common', 'routing', 'executor', 'sim', 'evaluation', 'ros', 'interfaces'},
    'root': set(),
}


def layer(module: str) -> str:
    """``common``, ``routing``, ``executor``, ``sim``, ``evaluation``, ``ros``, ``cli``, ``root``.

    ``interfaces`` is the package itself as an import target (``from tool_router.msg import``):
    the generated ROS interfaces, which only the ROS glue and the CLI may use.
    """
    parts = module.split('.')
    if len(parts) == 1:
        return 'root'
    return parts[1] if parts[1] in ALLOWED else 'root'


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, module it may not import): across wings, from the core to ROS or the CLI."""
    bad = []
    for src, targets in edges.items():
        here = layer(src)
        for dst in targets:
            there = 'interfaces' if dst == 'tool_router' else layer(dst)
            if there != here and there not in ALLOWED.get(here, set()):
                bad.append((src, dst))
    return sorted(bad)


def main() -> int:
    edges = graph()
    found = cycles(edges)
    arrows = upward(edges)
    for comp in found:
        print('cycle:', ' <-> '.join(comp))
    for src, dst in arrows:
        print(f'upward arrow: {src} -> {dst}')
    n_edges = sum(len(t) for t in edges.values())
    print(f'{len(edges)} modules, {n_edges} imports: {len(found)} cycles, {len(arrows)} upward')
    return 1 if found or arrows else 0


if __name__ == '__main__':
    raise SystemExit(main())
