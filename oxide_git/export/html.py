"""HTML export: one self-contained page (inline CSS and script, a CSP that forbids any request),
a section per session, collapsible tool calls, highlighted checkpoint diffs, a search box, and a
layout that works on a phone.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from typing import IO, Any

from oxide_git.core.model import Message, PartType, to_iso
from oxide_git.core.titles import display, is_real_prompt
from oxide_git.export.markdown import as_text, redactions_line
from oxide_git.export.render_text import counted, tool_gist
from oxide_git.export.views import CheckpointView, SessionView, replay, spool, tool_names
from oxide_git.ops.usage import line as usage_line

CLIP = 20000  # characters of one tool input or output

CSS = """
:root{--bg:#fff;--fg:#1f2328;--mut:#59636e;--bd:#d1d9e0;--u:#ddf4ff;--a:#f6f8fa;--add:#dafbe1;
--del:#ffebe9;--hunk:#ddf4ff;--code:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mut:#9198a1;--bd:#3d444d;
--u:#0c2d6b;--a:#151b23;--add:#12361f;--del:#4c1d1d;--hunk:#0c2d6b;--code:#151b23}}
*{box-sizing:border-box}[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,sans-serif;overflow-wrap:anywhere}
header{position:sticky;top:0;z-index:2;background:var(--bg);border-bottom:1px solid var(--bd);
padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
header h1{font-size:1.1rem;margin:0;flex:1 1 auto}
#q{flex:1 1 14rem;min-width:0;font:inherit;padding:.4rem .6rem;border:1px solid var(--bd);
border-radius:6px;background:var(--bg);color:var(--fg)}
#count{color:var(--mut);font-size:.85rem}
main{max-width:60rem;margin:0 auto;padding:0 1rem 3rem}
nav ul{padding-left:1.2rem}
section.session{border-top:2px solid var(--bd);margin-top:1.5rem}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem;color:var(--mut);
font-size:.9rem}dl.meta dd{margin:0}
.msg{border:1px solid var(--bd);border-radius:8px;margin:.6rem 0;padding:.5rem .75rem;background:var(--a)}
.msg.user{background:var(--u)}
.role{font-size:.8rem;color:var(--mut);font-weight:600}
.text{white-space:pre-wrap}
pre{white-space:pre-wrap;background:var(--code);border:1px solid var(--bd);border-radius:6px;
padding:.5rem;margin:.3rem 0;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
max-height:40rem;overflow:auto}
details{margin:.3rem 0}summary{cursor:pointer;color:var(--mut);font-size:.9rem}
summary code{font-size:.85rem}
details.checkpoint{border-left:3px solid #1f883d;padding-left:.6rem}
table.stat{border-collapse:collapse;font-size:.85rem;width:100%}
table.stat td{padding:.05rem .4rem;border-bottom:1px solid var(--bd)}
table.stat td.n{text-align:right;white-space:nowrap}.plus{color:#1a7f37}.minus{color:#cf222e}
.diff span{display:block}.diff .a{background:var(--add)}.diff .d{background:var(--del)}
.diff .h{background:var(--hunk)}.diff .f{font-weight:600}
@media (max-width:600px){body{font-size:14px}main{padding:0 .5rem 2rem}.msg{padding:.4rem .5rem}}
"""

JS = """
(function(){
var q=document.getElementById('q'),cnt=document.getElementById('count');
var items=Array.prototype.slice.call(document.querySelectorAll('.msg')),texts=null,timer=null;
function run(){
 var v=q.value.trim().toLowerCase(),n=0;
 if(!texts){texts=items.map(function(e){return e.textContent.toLowerCase();});}
 for(var i=0;i<items.length;i++){
  var hit=!v||texts[i].indexOf(v)>=0;items[i].hidden=!hit;
  if(hit){n++;if(v){var ds=items[i].querySelectorAll('details');
   for(var j=0;j<ds.length;j++){if(ds[j].textContent.toLowerCase().indexOf(v)>=0){ds[j].open=true;}}}}
 }
 cnt.textContent=v?(n+' of '+items.length+' messages'):'';
}
q.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(run,60);});
})();
"""


def _clip(text: str, n: int = CLIP) -> str:
    return text if len(text) <= n else text[:n] + f"\n… ({len(text) - n} more characters)"


def _one_line(text: str, n: int = 90) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def part_html(kind: str, d: dict[str, Any], names: dict[str, str]) -> str:
    if kind == PartType.TEXT:
        text = str(d.get("text") or "")
        return f'<div class="text">{escape(text.strip(chr(10)))}</div>' if text.strip() else ""
    if kind == PartType.REASONING:
        if not str(d.get("text") or "").strip():
            return ""
        return (f'<details class="reasoning"><summary>Reasoning</summary>'
                f'<pre>{escape(_clip(str(d.get("text") or "")))}</pre></details>')
    if kind == PartType.TOOL_CALL:
        inp = as_text(d.get("input"))
        return (f'<details class="tool call"><summary>→ {escape(str(d.get("name") or "tool"))} '
                f'<code>{escape(tool_gist(d.get("input"), 90))}</code></summary>'
                f'<pre>{escape(_clip(inp))}</pre></details>')
    if kind == PartType.TOOL_RESULT:
        out = as_text(d.get("output"))
        err = " (error)" if d.get("is_error") else ""
        name = names.get(str(d.get("call_id")), "tool")
        return (f'<details class="tool result"><summary>← {escape(name)}{err} '
                f'<code>{escape(_one_line(out))}</code></summary><pre>{escape(_clip(out))}</pre></details>')
    if kind == PartType.PATCH:
        return (f'<details class="patch"><summary>Patch</summary>'
                f'{diff_html(_clip(str(d.get("text") or "")))}</details>')
    if kind == PartType.COMPACTION:
        return f'<div class="text"><em>Compaction summary:</em> {escape(str(d.get("summary") or ""))}</div>'
    if kind == PartType.FILE:
        return f'<div class="text"><em>File:</em> <code>{escape(str(d.get("path")))}</code></div>'
    if kind == PartType.IMAGE:
        mime, data = str(d.get("mime") or ""), d.get("data")
        if isinstance(data, str) and mime in ("image/png", "image/jpeg", "image/gif", "image/webp"):
            return f'<img alt="image" style="max-width:100%" src="data:{mime};base64,{escape(data)}">'
        return f'<div class="text"><em>Image</em> ({escape(mime or "unknown type")})</div>'
    return ""


def message_html(seq: int, m: Message, names: dict[str, str]) -> str:
    tool_names(m, names)
    body = "".join(part_html(p.type, dict(p.data), names) for p in m.parts)
    if not body:
        return ""
    role = escape(m.role)
    when = to_iso(m.created_at) or ""
    mark = " · compacted" if m.compacted else ""
    if m.is_harness():  # what the agent's harness injected, not a turn anybody typed: folded
        mark += " · harness context"
        body = f'<details class="harness"><summary>harness context</summary>{body}</details>'
    return (f'<article class="msg {role}" id="m-{escape(m.id)}"><div class="role">{role} · #{seq}'
            f'{mark} <time>{escape(when)}</time></div>{body}</article>\n')


def diff_html(text: str) -> str:
    out = []
    for line in text.splitlines():
        if line.startswith(("+++", "---", "diff ", "index ", "new file", "deleted file")):
            cls = "f"
        elif line.startswith("+"):
            cls = "a"
        elif line.startswith("-"):
            cls = "d"
        elif line.startswith("@@"):
            cls = "h"
        else:
            cls = ""
        out.append(f'<span class="{cls}">{escape(line) or " "}</span>' if cls else
                   f"<span>{escape(line) or ' '}</span>")
    return '<pre class="diff">' + "".join(out) + "</pre>"


def checkpoint_html(cp: CheckpointView) -> str:
    rows = "".join(
        f'<tr><td>{escape(f["path"])}</td><td class="n"><span class="plus">+{f["additions"]}</span> '
        f'<span class="minus">−{f["deletions"]}</span></td></tr>' for f in cp.files)
    if cp.files_total > len(cp.files):
        rows += f'<tr><td colspan="2">… {cp.files_total - len(cp.files)} more file(s)</td></tr>'
    diff = diff_html(cp.patch) if cp.patch else ""
    cut = "<p><em>Diff truncated.</em></p>" if cp.patch_truncated else ""
    return (f'<details class="checkpoint" id="c-{escape(cp.id)}"><summary>Checkpoint '
            f'<code>{escape(cp.id[:12])}</code> · {escape(cp.kind)} · {escape(cp.title)} · '
            f'{cp.files_total} file(s) <span class="plus">+{cp.additions}</span> '
            f'<span class="minus">−{cp.deletions}</span></summary>'
            f'<table class="stat">{rows}</table>{diff}{cut}</details>\n')


def session_html(v: SessionView, alone: bool = False) -> Iterator[str]:
    s = v.session
    names: dict[str, str] = {}
    body = spool()
    shown = 0  # messages with something to read (records kept whole are not drawn)
    for item in v.timeline():
        if isinstance(item, CheckpointView):
            body.write(checkpoint_html(item))
        else:
            if v.first_prompt is None and is_real_prompt(item[1]):
                v.first_prompt = item[1].text()
            html = message_html(*item, names)
            shown += bool(html)
            body.write(html)
    meta = [("Session", f"<code>{escape(s.id)}</code>"), ("Agent", escape(s.agent + (
        f" ({s.model})" if s.model else ""))), ("Branch", escape(s.branch or "-")),
        ("When", escape(f"{to_iso(s.created_at) or '-'} → {to_iso(s.updated_at) or '-'}")),
        ("Messages", counted(shown, v.count)),
        ("Checkpoints", str(len(v.checkpoints))),
        ("Redacted", escape(redactions_line(v.redactions)))]
    if v.usage:
        meta.append(("Usage", escape(usage_line(v.usage))))
    if s.parent_id:
        meta.append(("Forked from", f"<code>{escape(s.parent_id)}</code>"))
    head = "" if alone else f"<h2>{escape(_title(v))}</h2>"  # alone: the page's h1 is its title
    yield (f'<section class="session" id="s-{escape(s.id)}">{head}'
           '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{x}</dd>" for k, x in meta) + "</dl>\n")
    yield from replay(body)
    yield "</section>\n"


def _title(v: SessionView) -> str:
    """What `list`, `show` and `search` call the session: its title, else its first real prompt."""
    return display(v.session.title, v.first_prompt, v.session.id, 120)


def blame_html(b: dict[str, Any]) -> str:
    """The range's lines by who wrote them (``blame_range.RangeSummary.to_json``) as a table."""
    total = b["lines"] or 1
    rows = [(f"{a} (agent)", n) for a, n in b["by_agent"].items()]
    rows += [(label, b[k]) for k, label in (("human", "human"), ("agent_or_user", "agent or user"),
                                            ("before_oxide", "unknown")) if b[k]]
    body = "".join(f"<tr><td>{escape(str(w))}</td><td>{n}</td><td>{100 * n / total:.1f}%</td></tr>"
                   for w, n in rows)
    return (f'<section class="blame"><h2>Who wrote the lines of {escape(b["range"])}</h2>'
            f'<p>{b["lines"]} line(s) added by {b["commits"]} commit(s).</p>'
            f"<table><tr><th>written by</th><th>lines</th><th>share</th></tr>{body}</table></section>\n")


def write_html(views: Iterator[SessionView], out: IO[str], blame: dict[str, Any] | None = None) -> None:
    sections = spool()
    toc: list[str] = []
    titles: list[str] = []
    listed = list(views)  # (each one's messages are still streamed, as it is rendered)
    for v in listed:
        sections.writelines(session_html(v, alone=len(listed) == 1))
        titles.append(_title(v))
        toc.append(f'<li><a href="#s-{escape(v.session.id)}">{escape(titles[-1])}</a> '
                   f"({v.count} messages)</li>")
    heading = escape(titles[0]) if len(titles) == 1 else (
        f"{len(titles)} agent sessions" if titles else "Agent sessions")
    out.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
              '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
              "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
              "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
              f"<title>{heading}</title><style>{CSS}</style></head><body>\n"
              f'<header><h1>{heading}</h1><input id="q" type="search" '
              'placeholder="Search messages…" aria-label="Search messages" autocomplete="off">'
              '<span id="count" aria-live="polite"></span></header>\n<main>\n')
    if blame is not None:
        out.write(blame_html(blame))
    if len(toc) > 1:
        out.write("<nav><ul>" + "".join(toc) + "</ul></nav>\n")
    if not toc:
        out.write("<p>No agent session is linked to these commits.</p>\n")
    out.writelines(replay(sections))
    out.write(f"</main><script>{JS}</script></body></html>\n")
