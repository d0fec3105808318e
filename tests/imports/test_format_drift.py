"""Format drift is never silent: record types an importer does not know are counted, reported by
`import` with the agent version that wrote them, and listed by `doctor` for the whole store."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURES, oxide


def _transcript(tmp_path: Path, kinds: list[str], version: str = "2.1.999") -> Path:
    src = (FIXTURES / "claude" / "images.jsonl").read_text().splitlines()
    extra = [json.dumps({"type": k, "version": version, "uuid": f"u-{i}", "sessionId": "s",
                         "timestamp": "2026-02-01T10:00:09.000Z"}) for i, k in enumerate(kinds)]
    path = tmp_path / "drift.jsonl"
    path.write_text("\n".join(src + extra) + "\n")
    return path


def test_import_warns_once_per_unknown_type_with_count_and_version(repo: Path, tmp_path: Path) -> None:
    path = _transcript(tmp_path, ["hologram", "hologram", "hologram", "telepathy"])
    r = oxide(repo, "import", "--agent", "claude", str(path))
    warnings = [ln for ln in r.stderr.splitlines() if "unknown type" in ln]
    assert warnings == [
        "warning: 3 claude records of unknown type 'hologram' (claude-code 2.1.999) kept as other parts",
        "warning: 1 claude record of unknown type 'telepathy' (claude-code 2.1.999) kept as other parts",
    ]
    shown = json.loads(oxide(repo, "show", "019c18a520e8", "--json", "--full").stdout)
    kinds = [p.get("kind") for m in shown["messages"] for p in m["parts"] if p["type"] == "other"]
    assert kinds.count("hologram") == 3 and "telepathy" in kinds  # kept, never dropped

    doctor = oxide(repo, "doctor", check=False)
    assert "3 claude record(s) of unknown type 'hologram' (written by claude-code 2.1.999)" in doctor.stderr + doctor.stdout

    with path.open("a") as f:  # the file grows: the new records add to what doctor counts
        f.write(json.dumps({"type": "hologram", "version": "2.1.999", "uuid": "u-9"}) + "\n")
    again = oxide(repo, "import", "--agent", "claude", str(path))
    assert "1 claude record of unknown type 'hologram'" in again.stderr
    doctor = oxide(repo, "doctor", "--json", check=False)
    found = [f["message"] for f in json.loads(doctor.stdout)["findings"] if "hologram" in f["message"]]
    assert found and found[0].startswith("4 claude record(s)")


def test_import_json_lists_unknown_types(repo: Path, tmp_path: Path) -> None:
    path = _transcript(tmp_path, ["hologram"])
    out = json.loads(oxide(repo, "import", "--json", "--agent", "claude", str(path)).stdout)
    assert out["files"][0]["unknown"] == [{"type": "hologram", "version": "claude-code 2.1.999", "count": 1}]
    assert out["drift"] == ["1 claude record of unknown type 'hologram' (claude-code 2.1.999) kept as other parts"]


def test_known_types_of_today_are_not_reported(repo: Path, tmp_path: Path) -> None:
    path = _transcript(tmp_path, ["api-request-shape", "atis-latch", "cost-state", "tools-used", "mode"])
    r = oxide(repo, "import", "--agent", "claude", str(path))
    assert "unknown type" not in r.stderr
