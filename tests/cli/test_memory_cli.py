"""`git oxide memory` from the command line: add (text, stdin, nothing), rm, log, export, import."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import oxide


def test_memory_commands_end_to_end(repo: Path) -> None:
    oxide(repo, "init")
    added = json.loads(oxide(repo, "memory", "add", "build", "Run make test.", "--json").stdout)
    assert added["topic"] == "build" and len(added["commit"]) == 40
    r = oxide(repo, "memory", "add", "style", input="Tabs.\n")  # TEXT from stdin
    assert r.stdout == "" and r.stderr.startswith("Added to style (")
    r = oxide(repo, "memory", "add", "empty", "-", input="  \n", check=False)
    assert r.returncode == 2 and "nothing to add" in r.stderr
    assert oxide(repo, "memory", "show", "style").stdout == "Tabs.\n"
    log = json.loads(oxide(repo, "memory", "log", "--json").stdout)
    assert [w["summary"] for w in log] == ["add style", "add build"] and log[0]["at"].endswith("Z")
    table = oxide(repo, "memory", "log", "-n", "1").stdout.splitlines()
    assert table[0].split() == ["COMMIT", "WHEN", "SESSION", "MESSAGE", "WHAT"] and len(table) == 2
    assert table[1].endswith("add style")
    exported = json.loads(oxide(repo, "memory", "export", "--into", "claude", "--json").stdout)
    assert exported["files"] == ["MEMORY.md", "build.md", "style.md"]
    into = Path(exported["into"])
    (into / "notes.md").write_text("written by Claude Code\n")
    r = oxide(repo, "memory", "export", "--into", "claude")
    assert r.stderr.startswith("Wrote 0 file(s) into ")
    imported = json.loads(oxide(repo, "memory", "import", "--from", "claude", "--json").stdout)
    assert imported["files"] == ["notes.md"] and imported["commit"]
    assert oxide(repo, "memory", "show", "notes").stdout == "written by Claude Code\n"
    r = oxide(repo, "memory", "import", "--from", "claude")
    assert r.stderr.startswith("Imported 0 file(s) from ")
    removed = json.loads(oxide(repo, "memory", "rm", "style", "--json").stdout)
    assert removed["topic"] == "style"
    r = oxide(repo, "memory", "rm", "build")
    assert r.stderr.startswith("Removed build (")
    r = oxide(repo, "memory", "rm", "build", check=False)
    assert r.returncode == 1 and "error: no memory topic build" in r.stderr
