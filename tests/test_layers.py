"""The core's imports run one way: down the layers below, never up, never in a circle.

A module may import from its own layer or a lower one. Type-only imports (under
``if TYPE_CHECKING:``) are not counted: they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).parents[1] / "ucma_core"

#: Lowest first. A name is a top-level module or package of ucma_core.
LAYERS: list[set[str]] = [
    {"errors", "protocols", "timezones"},
    {
        "config",
        "validation",
        "records",
        "scope",
        "tokens",
        "outcomes",
        "importance",
        "openai_client",
        "progress",
        "shutdown",
        "background",
    },
    {"embedders", "storage", "dynamics"},
    {"stores", "providers", "working_memory", "attachments"},
    {"retrieval", "consolidation", "corrections"},
    {"memory_base", "reads", "knowledge", "maintenance", "transfer", "owners", "scoped", "memory"},
    {"conversation", "portable", "plots", "cli", "shared"},
]
RANK = {name: n for n, layer in enumerate(LAYERS) for name in layer}
#: The parts Memory is made of share MemoryBase and never import the façade itself.
PARTS = {"memory_base", "reads", "knowledge", "maintenance", "transfer", "owners"}


def _unit(path: Path) -> str:
    return path.relative_to(CORE).parts[0].removesuffix(".py")


def _runtime_imports(tree: ast.Module) -> list[str]:
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("ucma_core."):
                found.append(child.module.split(".")[1])
            elif isinstance(child, ast.Import):
                found.extend(a.name.split(".")[1] for a in child.names if a.name.startswith("ucma_core."))
            visit(child)

    visit(tree)
    return found


def _edges() -> list[tuple[str, str, str]]:
    edges = []
    for path in sorted(CORE.rglob("*.py")):
        if path.name == "__init__.py" and path.parent == CORE:
            continue  # the package root re-exports from everywhere
        unit = _unit(path)
        for target in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if target != unit:
                edges.append((str(path.relative_to(CORE)), unit, target))
    return edges


def test_every_core_unit_has_a_layer() -> None:
    units = {_unit(p) for p in CORE.rglob("*.py") if p != CORE / "__init__.py"}
    assert units - RANK.keys() == set()


def test_imports_never_run_up_the_layers() -> None:
    upward = [(f, u, t) for f, u, t in _edges() if t in RANK and RANK[t] > RANK[u]]
    assert upward == []


def test_the_parts_of_memory_do_not_import_the_facade() -> None:
    assert [(f, t) for f, u, t in _edges() if u in PARTS and t in {"memory", "scoped"}] == []
