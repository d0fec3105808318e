"""The HTML export in a real headless Chromium (Debian's `chromium`), driven over the DevTools
protocol on a pipe (`--remote-debugging-pipe`, stdlib only): no console errors, no network
requests, the search box filters, a tool call expands, and it fits a phone's width."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_ctx, oxide
from tests.planted import claude_transcript

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")


class Browser:
    """A headless Chromium and one page, spoken to with CDP messages on fds 3 (in) and 4 (out)."""

    def __init__(self, profile: Path) -> None:
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()

        def fds() -> None:  # the child's fds 3 and 4 (dup first: the pipe ends may be 3 or 4)
            r, w = os.dup(to_r), os.dup(from_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--remote-debugging-pipe",
             "about:blank"],
            pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)  # type: ignore[no-any-return]

    def call(self, method: str, session: bool = False, timeout: float = 30, **params: Any) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})  # type: ignore[no-any-return]
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for e in self.events:
            if e.get("method") == method:
                return e
        while True:
            e = self._read(deadline)
            self.events.append(e)
            if e.get("method") == method:
                return e

    def js(self, expr: str) -> Any:
        r = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_w)
        os.close(self._from_r)


@pytest.fixture
def page_file(repo: Path, tmp_path: Path) -> Path:
    from oxide_git.imports.importing import import_sessions

    oxide(repo, "init")
    path = claude_transcript(tmp_path / "t.jsonl", str(repo), turns=3)
    sid = import_sessions(make_ctx(repo), [("claude", path)]).files[0].sessions[0]
    (repo / "src" / "app.py").write_text("print('hello')\nprint('more')\n")
    oxide(repo, "checkpoint", "-m", "after the fix", "--session", sid)
    out = tmp_path / "sessions.html"
    oxide(repo, "export", sid, "--format", "html", "-o", str(out))
    return out


def test_html_export_in_headless_chromium(page_file: Path, tmp_path: Path) -> None:
    b = Browser(tmp_path / "profile")
    try:
        b.call("Emulation.setDeviceMetricsOverride", session=True, width=390, height=844,
               deviceScaleFactor=2, mobile=True)
        b.call("Page.navigate", session=True, url=page_file.as_uri())
        b.wait_for("Page.loadEventFired")
        total = b.js("document.querySelectorAll('.msg').length")
        assert total >= 10
        # it fits a phone: nothing wider than the viewport
        assert b.js("document.documentElement.scrollWidth <= window.innerWidth + 1")
        # type into the search box (real key input events), wait for the debounce
        b.js("document.getElementById('q').focus()")
        b.call("Input.insertText", session=True, text="turn 1")
        time.sleep(0.4)
        visible = b.js("Array.from(document.querySelectorAll('.msg')).filter(e => !e.hidden).length")
        assert 0 < visible < total
        assert b.js("Array.from(document.querySelectorAll('.msg')).filter(e => !e.hidden)"
                    ".every(e => e.textContent.toLowerCase().includes('turn 1'))")
        assert "of" in b.js("document.getElementById('count').textContent")
        # clear the search: everything is back
        b.js("const q = document.getElementById('q'); q.value = ''; q.dispatchEvent(new Event('input'))")
        time.sleep(0.3)
        assert b.js("document.querySelectorAll('.msg:not([hidden])').length") == total
        # expand a tool call with a real click on its summary
        b.js("document.querySelector('details.tool.call').scrollIntoView({block: 'center'})")
        box = b.js("(() => { const r = document.querySelector('details.tool.call > summary')"
                   ".getBoundingClientRect(); return [r.x + 10, r.y + r.height / 2]; })()")
        assert not b.js("document.querySelector('details.tool.call').open")
        for kind in ("mousePressed", "mouseReleased"):
            b.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1],
                   button="left", clickCount=1)
        time.sleep(0.2)
        assert b.js("document.querySelector('details.tool.call').open")
        assert b.js("document.querySelector('details.tool.call pre').offsetHeight") > 0
        # the checkpoint's diff is there, highlighted
        b.js("document.querySelector('details.checkpoint').open = true")
        assert b.js("document.querySelectorAll('details.checkpoint .diff .a').length") >= 1
        shot = b.call("Page.captureScreenshot", session=True, format="png")
        png = tmp_path / "sessions.png"
        png.write_bytes(base64.b64decode(shot["data"]))
        assert png.stat().st_size > 5000
        # nothing but the file itself was requested; no console error, no exception
        requests = [e["params"]["request"]["url"] for e in b.events
                    if e.get("method") == "Network.requestWillBeSent"]
        assert requests and all(u == page_file.as_uri() for u in requests), requests
        errors = [e for e in b.events if e.get("method") == "Runtime.exceptionThrown"
                  or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
                  or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
        assert not errors, errors
    finally:
        b.close()


def test_html_heading_timeline_and_empty_turns_in_chromium(repo: Path, tmp_path: Path) -> None:
    """Issue 14, item 6: the heading is the session's title, empty assistant turns are gone, each
    checkpoint sits where it was taken, with the files it changed and their diff folded."""
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.store import writes as store

    oxide(repo, "init")
    ctx = make_ctx(repo)
    sid = "9" * 32
    s = Session(id=sid, agent="claude", worktree=ctx.repo.worktree_id)
    store.append(ctx, s, [Message("user", (Part.text("Speed up the app"),)),
                          Message("assistant", (Part.text("\n\n"),)),  # an empty turn
                          Message("assistant", (Part.text("I changed app.py."),))])
    ctx.close()
    (repo / "src" / "app.py").write_text("print('fast')\n")
    oxide(repo, "checkpoint", "-m", "after the speed-up", "--session", sid[:8])
    ctx = make_ctx(repo)
    store.append(ctx, s, [Message("user", (Part.text("Now document it"),))])
    ctx.close()
    page = tmp_path / "s.html"
    oxide(repo, "export", sid[:8], "--format", "html", "-o", str(page))
    b = Browser(tmp_path / "profile")
    try:
        b.call("Page.navigate", session=True, url=page.as_uri())
        b.wait_for("Page.loadEventFired")
        assert b.js("document.querySelector('header h1').textContent") == "Speed up the app"
        assert b.js("document.title") == "Speed up the app"
        roles = b.js("Array.from(document.querySelectorAll('.msg')).map(e => e.className)")
        assert roles == ["msg user", "msg assistant", "msg user"]  # the empty turn is not there
        order = b.js("Array.from(document.querySelectorAll('.msg, details.checkpoint'))"
                     ".map(e => e.classList.contains('checkpoint') ? 'cp' : e.textContent.slice(0, 60))")
        assert order[-1].startswith("Now document it") or "Now document it" in order[-1]
        assert order.index("cp") == len(order) - 2  # taken after "I changed app.py.", before the next prompt
        assert not b.js("document.querySelector('details.checkpoint').open")  # folded
        assert "src/app.py" in b.js("document.querySelector('details.checkpoint table').textContent")
        b.js("document.querySelector('details.checkpoint').open = true")
        assert "print('fast')" in b.js("document.querySelector('details.checkpoint .diff').textContent")
    finally:
        b.close()
