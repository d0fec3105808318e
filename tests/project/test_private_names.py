"""git oxide uses other libraries through their public names only (house rules: "Do not reach into
other libraries' private names"): no module of theirs swapped in ``sys.modules``, no private module
imported (``_sha1``, ``pydantic._internal``), no private name taken from one. A library's next
release may change those without a word; a public name it must keep or deprecate."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "oxide_git"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and part != "__future__" for part in dotted.split("."))


def _sys_modules(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "modules"
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


def reaches(tree: ast.AST) -> list[str]:
    """Each place (line: what) a module uses another library's private names or rewrites
    ``sys.modules``; reading ``sys.modules`` (is a module loaded?) is public and fine."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            if module == "oxide_git" or module.startswith("oxide_git."):
                continue  # oxide's own modules are ours
            if _private(module):
                found.append(f"{node.lineno}: from {module} import ...")
            found += [f"{node.lineno}: from {module} import {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [f"{node.lineno}: sys.modules[...] changed" for t in targets
                      if isinstance(t, ast.Subscript) and _sys_modules(t.value)]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and _sys_modules(node.func.value) and node.func.attr in ("setdefault", "pop", "update", "clear")):
            found.append(f"{node.lineno}: sys.modules.{node.func.attr}(...)")
    return found


def test_no_module_reaches_into_another_librarys_private_names() -> None:
    found = {str(p.relative_to(PACKAGE)): reaches(ast.parse(p.read_text(), str(p))) for p in SOURCES}
    assert len(found) > 100 and {name: where for name, where in found.items() if where} == {}


def test_the_check_sees_each_way_of_reaching_in() -> None:
    code = ("import sys\nfrom _sha1 import sha1\nfrom pydantic._internal import _config\nimport _socket\n"
            "from httpx import _main\nsys.modules['mcp'] = None\nsys.modules.setdefault('httpx._main', None)\n"
            "del sys.modules['mcp']\nfrom . import _own\nfrom .blame_cache import _private_but_ours\n"
            "loaded = 'pygit2' in sys.modules\nimport hashlib\n")
    assert sorted(reaches(ast.parse(code))) == sorted([
        "2: from _sha1 import ...", "3: from pydantic._internal import ...", "3: from pydantic._internal import _config",
        "4: import _socket",
        "5: from httpx import _main", "6: sys.modules[...] changed", "7: sys.modules.setdefault(...)",
        "8: sys.modules[...] changed"])


def crossings(tree: ast.AST) -> list[str]:
    """Each place (line: what) a module of oxide takes another oxide module's private name: by
    importing it, or as ``module._name`` through a module it imported (house rules: a name two
    modules share is public, with a name that says what it is)."""
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("oxide_git"):
            found += [f"{node.lineno}: from {node.module} import {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
            modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.asname and a.name.startswith("oxide_git.")}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_takes_another_modules_private_names() -> None:
    found = {str(p.relative_to(PACKAGE)): crossings(ast.parse(p.read_text(), str(p))) for p in SOURCES}
    assert {name: where for name, where in found.items() if where} == {}


def test_the_crossing_check_sees_both_ways() -> None:
    code = ("from oxide_git.store import snapshots\nfrom oxide_git.agents.codex.parse import _Parser\n"
            "from oxide_git.agents.codex.lines import texts as _texts\nx = snapshots._BLOB\n"
            "y = snapshots.take\nz = self._own\n")
    assert sorted(crossings(ast.parse(code))) == [
        "2: from oxide_git.agents.codex.parse import _Parser", "4: snapshots._BLOB"]
