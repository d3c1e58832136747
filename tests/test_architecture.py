"""The house rules, checked on the installed package: no import loops, and core never imports a plugin.

Every module of ``agentworld`` is parsed (ast, nothing is imported) and every import statement counts,
lazy ones inside functions included: a loop that only closes at run time is still a loop a reader must
untangle. Imports only under ``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import networkx as nx
import pytest

PARTS = ("world", "tasks", "play", "cce", "runs", "cli")  # core's parts, lowest first


def package_root() -> Path:
    spec = importlib.util.find_spec("agentworld")
    assert spec is not None and spec.submodule_search_locations
    return Path(list(spec.submodule_search_locations)[0])


def _in_package(root: Path, path: Path) -> bool:
    """A module of the package: every folder between it and the root is a package (has ``__init__.py``), so
    build/, dist/, virtual environments and the tests' and tools' folders are not walked."""
    rel = path.relative_to(root)
    if rel.parts[0] in ("tests", "benchmarks", "tools", "docs") or any(part.startswith(".") for part in rel.parts):
        return False
    folder = path.parent
    while folder != root:
        if not (folder / "__init__.py").is_file():
            return False
        folder = folder.parent
    return True


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["agentworld", *parts])


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def import_graph() -> nx.DiGraph:
    root = package_root()
    files = [p for p in root.rglob("*.py") if _in_package(root, p)]
    modules = {module_name(root, p): p for p in files}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph.add_edge(name, target, line=node.lineno)
    return graph


GRAPH = import_graph()


def test_the_walker_sees_the_whole_package() -> None:
    assert "agentworld.core.play.episode" in GRAPH
    assert GRAPH.has_edge("agentworld.core.play.episode", "agentworld.core.world.tools")
    assert len(GRAPH) > 80


def test_no_import_loops() -> None:
    loops = sorted(nx.simple_cycles(GRAPH), key=len)
    assert not loops, "import loops (each a cycle of modules): " + "; ".join(" -> ".join(c + c[:1]) for c in loops[:10])


@pytest.mark.parametrize("outside", ["agentworld.plugins", "agentworld.mcp_server"])
def test_core_never_imports_plugins(outside: str) -> None:
    bad = [(a, b, d["line"]) for a, b, d in GRAPH.edges(data=True)
           if a.startswith("agentworld.core") and (b == outside or b.startswith(outside + "."))]
    assert not bad, f"core reaches {outside} directly (use the plugin host's registries): {bad}"


def _part(module: str) -> str | None:
    bits = module.split(".")
    return bits[2] if len(bits) > 2 and bits[1] == "core" and bits[2] in PARTS else None


def test_core_parts_import_only_downwards() -> None:
    rank = {p: i for i, p in enumerate(PARTS)}
    bad = []
    for a, b, d in GRAPH.edges(data=True):
        pa, pb = _part(a), _part(b)
        if pa and pb and rank[pb] > rank[pa]:
            bad.append(f"{a} -> {b} (line {d['line']})")
    assert not bad, "imports must point down world <- tasks <- play <- cce <- runs <- cli: " + "; ".join(bad)


def test_core_top_level_is_only_the_plugin_host_and_shared_helpers() -> None:
    core = package_root() / "core"
    top = sorted(p.name for p in core.glob("*.py"))
    assert top == ["__init__.py", "console.py", "hookspecs.py", "plugins.py", "yamlio.py"]
    assert sorted(p.name for p in core.iterdir() if p.is_dir() and not p.name.startswith("__")) == sorted(PARTS)
