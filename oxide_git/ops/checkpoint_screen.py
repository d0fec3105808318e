"""What a checkpoint may carry off this machine: the screen every push of checkpoints goes through.

A checkpoint is the worktree as it was, and the worktree holds what never goes into a commit: an
untracked ``.env``, a token pasted into a file for a quick test. Before a checkpoint is pushed
(`git oxide push --checkpoints`, the pre-push hook with ``oxide.pushCheckpoints``), every blob its
tree has that its parent (the HEAD it was taken on, which the push sends anyway) lacks at that path
is screened with the rules and allowlist that messages are redacted with (``redact``):

- a file that is a secret by its name (``SECRET_FILES`` and ``git config oxide.secretFiles``) is
  withheld whatever it holds: the twin has the parent's version of it, or none;
- a text file in which a rule fires gets its redacted text (``[REDACTED:<kind>]``, the rest of its
  lines as they were, so blame in a teammate's clone still works);
- a binary file in which a rule fires is withheld as a secret file is.

A checkpoint with nothing to take out is sent as it is. Otherwise what is sent under its ref name
is a *twin*: the same parent, author, time and message (redacted), its tree with those blobs
replaced, and trailers that say so: ``Oxide-Checkpoint`` (the real id, which notes and the index
name it by), ``Oxide-Redacted`` (the paths) and one ``Oxide-Redacted-File`` (JSON) per path. With
``git config oxide.checkpointSecrets withhold`` a checkpoint that needs a twin is withheld instead.

What a push sends under each checkpoint's name is ``refs/oxide/outgoing/checkpoints/<name>`` (one
wildcard refspec sends them all). The verdicts are kept in ``<oxide>/screened`` with the digest of
the rules they were made under, and twins are built deterministically, so a repeat push screens
only new checkpoints. The local checkpoint is never changed: a rewind here restores the real files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.core.secret_files import SecretNames
from oxide_git.git import refs
from oxide_git.git.objects import BLOB
from oxide_git.store import redact
from oxide_git.store.context import Context
from oxide_git.store.snapshots import REDACTED, REDACTED_FILE, TWIN_OF, redacted_reason
from oxide_git.store.trees import Entry, apply_changes, empty_tree

CACHE_FILE = "screened"
OUTGOING = refs.OUTGOING + "checkpoints/"  # what a push sends under each checkpoint's name
_VERSION = 1  # of the screen: a new one screens every checkpoint again
_SNIFF = 8000  # bytes git reads to tell a binary file (a NUL among them)
_SCANNED = (int(pygit2.enums.FileMode.BLOB), int(pygit2.enums.FileMode.BLOB_EXECUTABLE),
            int(pygit2.enums.FileMode.LINK))


@dataclass
class Screened:
    """One checkpoint as a push sends it: ``send`` is its own id (clean), a twin's, or None
    (withheld); ``files``: what was taken out ({"path", "action": redacted|withheld, "rules"})."""

    id: str
    ref: str
    send: str | None
    files: list[dict[str, Any]] = field(default_factory=list)
    why: str = ""  # why the whole checkpoint is withheld
    fresh: bool = False  # screened by this push (not from the map)
    parent: str | None = None  # the commit it was taken on, and its tree: what a later checkpoint
    tree: str | None = None  # on the same parent needs to screen only what changed since
    oid: str = ""  # the commit the local ref points at (a pulled twin's own id, not ``id``)

    @property
    def clean(self) -> bool:
        return self.send == self.oid

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"checkpoint": self.id, "ref": self.ref,
                             "sent_as": "withheld" if self.send is None else "twin", "files": self.files}
        if self.send is not None:
            d["twin"] = self.send
        if self.why:
            d["why"] = self.why
        return d


class Screen:
    """The screen of one repository as configured now; ``checkpoint(name, oid)`` screens one."""

    def __init__(self, ctx: Context) -> None:
        self.ctx, self.git, self.objects = ctx, ctx.repo.git, ctx.repo.objects
        self.redactor = redact.redactor_for(ctx)
        self.names = SecretNames.of(ctx)
        self.withhold = (ctx.config("oxide.checkpointSecrets") or "redact").strip().lower() == "withhold"
        allow = [p.pattern for p in self.redactor.allow] if self.redactor else None
        self.digest = hashlib.blake2b(json.dumps(
            [_VERSION, [r.kind for r in redact.RULES], allow, self.names.patterns, self.names.exempt,
             self.withhold]).encode(), digest_size=12).hexdigest()
        self._blobs: dict[tuple[str, str], tuple[Entry, dict[str, Any]] | None] = {}
        self.scanned = 0  # blobs read by this screen (the cost figure)

    # -- one checkpoint ---------------------------------------------------------------------

    def checkpoint(self, name: str, oid: pygit2.Oid, prior: Screened | None = None) -> Screened:
        """Screen one checkpoint. ``prior``: one screened before on the same parent; a file that
        has not changed since it and that it did not flag is not read again."""
        cid = name.rsplit("/", 1)[-1]
        commit = self.git.get(oid)
        if not isinstance(commit, pygit2.Commit):
            return Screened(cid, name, None, why="not a commit", oid=str(oid))
        parent = commit.parents[0] if commit.parent_ids else None
        base = parent.tree if parent is not None else None
        changes: dict[str, Entry] = {}
        files: list[dict[str, Any]] = []
        seen = self._unchanged_since(prior, commit)
        diff = base.diff_to_tree(commit.tree) if base is not None else commit.tree.diff_to_tree(swap=True)
        for d in diff.deltas:
            new = d.new_file
            if d.status == pygit2.enums.DeltaStatus.DELETED or int(new.mode) not in _SCANNED \
                    or seen(new.path):
                continue
            got = self._blob(new.path, new.id, int(new.mode), base)
            if got is not None:
                changes[new.path], what = got
                files.append({"path": new.path, **what})
        counts: Counter[str] = Counter()
        message = self.redactor.text(commit.message, counts) if self.redactor else commit.message
        at = {"parent": str(parent.id) if parent is not None else None, "tree": str(commit.tree_id),
              "oid": str(oid)}
        if not changes and not counts:
            return Screened(cid, name, str(oid), **at)
        if self.withhold:
            return Screened(cid, name, None, files, why="oxide.checkpointSecrets is withhold", **at)
        if counts:
            files.append({"path": "", "action": "redacted", "rules": dict(sorted(counts.items()))})
        tree = apply_changes(self.objects, commit.tree_id.raw, changes) or empty_tree(self.objects)
        twin = self.objects.rewrite_commit(commit.id.raw, _twin_message(message, cid, files), tree).hex()
        return Screened(cid, name, str(twin), files, **at)

    def _unchanged_since(self, prior: Screened | None, commit: pygit2.Commit) -> Callable[[str], bool]:
        """Is a path's blob the one ``prior`` held and passed (so clean here too)?"""
        if prior is None or prior.why or prior.tree is None or prior.tree not in self.git:
            return lambda _path: False
        since = self.git[prior.tree].peel(pygit2.Tree).diff_to_tree(commit.tree)
        redo = {f["path"] for f in prior.files} | {p for d in since.deltas
                                                   for p in (d.old_file.path, d.new_file.path)}
        return lambda path: path not in redo

    def _blob(self, path: str, oid: pygit2.Oid, mode: int, base: pygit2.Tree | None
              ) -> tuple[Entry, dict[str, Any]] | None:
        """What the twin has at ``path`` instead of blob ``oid`` and why (None: the blob as it is)."""
        key = (path, str(oid))
        if key in self._blobs:
            return self._blobs[key]
        got: tuple[Entry, dict[str, Any]] | None = None
        pattern = self.names.match(path)
        if pattern is not None:
            got = (_at(base, path), {"action": "withheld", "rules": {"secret_file": 1}, "pattern": pattern})
        elif self.redactor is not None:
            self.scanned += 1
            data = self.objects.read_kind(oid.raw, BLOB)
            # the gate reads a file's bytes as it reads a message's msgpack: its text is UTF-8 there
            # too, and an assignment after a hint word is what it looks for (tests: every rule fires)
            if self.redactor.gate.maybe(data):
                counts: Counter[str] = Counter()
                text = data.decode("utf-8", "surrogateescape")
                out = self.redactor.text(text, counts)
                rules = dict(sorted(counts.items()))
                if counts and b"\0" in data[:_SNIFF]:
                    got = (_at(base, path), {"action": "withheld", "rules": rules})
                elif counts:
                    new = self.objects.write(BLOB, out.encode("utf-8", "surrogateescape"))
                    got = ((new, mode), {"action": "redacted", "rules": rules})
        self._blobs[key] = got
        return got


def _at(tree: pygit2.Tree | None, path: str) -> Entry:
    """The entry of ``tree`` at ``path`` (None: it has none)."""
    if tree is None:
        return None
    try:
        e = tree[path]
    except KeyError:
        return None
    return (e.id.raw, int(e.filemode)) if e.type_str == "blob" else None


def _twin_message(message: str, cid: str, files: list[dict[str, Any]]) -> str:
    paths = [f["path"] for f in files if f["path"]]
    body = message.rstrip("\n") + "\n"
    trailers = [f"{TWIN_OF}: {cid}"]
    if paths:
        trailers.append(f"{REDACTED}: {', '.join(paths)}")
    trailers += [f"{REDACTED_FILE}: {json.dumps(f, ensure_ascii=False, sort_keys=True)}" for f in files]
    return body + "".join(t + "\n" for t in trailers)


def twin_of(commit: Any) -> str | None:
    """The real checkpoint ``commit`` is the redacted twin of (None: it is no twin)."""
    if not isinstance(commit, pygit2.Commit):
        return None
    for line in commit.message.splitlines():
        k, sep, v = line.partition(": ")
        if sep and k == TWIN_OF:
            return v.strip()
    return None


# -- every checkpoint a push sends --------------------------------------------------------------

def screen_all(ctx: Context) -> list[Screened]:
    """Every local checkpoint as a push would send it; the map in ``<oxide>/screened`` spares the
    ones screened before under the same rules (a twin missing from the object store is built again,
    deterministically the same)."""
    git = ctx.repo.git
    sc = Screen(ctx)
    known, lines = _load(ctx, sc.digest)
    out: list[Screened] = []
    new: list[Screened] = []
    todo: list[tuple[int, str, pygit2.Oid]] = []
    for name, oid in refs.iter_refs(git, refs.CHECKPOINTS):
        got = known.get(str(oid))
        if got is not None and (got.send is None or got.send == str(oid) or got.send in git):
            out.append(dataclasses.replace(got, id=name.rsplit("/", 1)[-1], ref=name))
            continue
        commit = git.get(oid)
        todo.append((commit.commit_time if isinstance(commit, pygit2.Commit) else 0, name, oid))
    last = {s.parent: s for s in known.values() if s.parent}  # the latest screened on each parent
    for _t, name, oid in sorted(todo):
        commit = git.get(oid)
        parents: list[pygit2.Oid] = list(commit.parent_ids) if isinstance(commit, pygit2.Commit) else []
        s = sc.checkpoint(name, oid, last.get(str(parents[0])) if parents else None)
        s.fresh = True
        out.append(s)
        new.append(s)
        if s.parent:
            last[s.parent] = s
    if lines + len(new) > 2 * len(out) + 64:  # mostly gone checkpoints or older rules: rewrite it
        _save(ctx, sc.digest, out, whole=True)
    elif new:
        _save(ctx, sc.digest, new)
    return out


def outgoing(ctx: Context, screened: list[Screened]) -> list[str]:
    """Point ``refs/oxide/outgoing/checkpoints/<name>`` at what each checkpoint is sent as (itself,
    its twin; none when withheld; gone checkpoints' are removed) and return the push's refspec:
    one wildcard, forced (a twin may replace what an older push sent under its name). One
    wildcard costs O(refs): git matches n exact or negative refspecs against n refs in n^2 (2,500
    of each took 6-13 s a push)."""
    git = ctx.repo.git
    want = {OUTGOING + s.ref[len(refs.CHECKPOINTS):]: s.send for s in screened if s.send is not None}

    def sync() -> None:
        have = {n: str(o) for n, o in refs.iter_refs(git, OUTGOING)}
        moves = {n: (pygit2.Oid(hex=have[n]) if n in have else None,
                     pygit2.Oid(hex=want[n]) if n in want else None)
                 for n in set(have) | set(want) if have.get(n) != want.get(n)}
        if moves:
            refs.update(git, moves, "oxide: checkpoints as a push sends them")

    refs.retry_on_move(sync)
    return [f"+{OUTGOING}*:{refs.CHECKPOINTS}*"] if want else []


def report_lines(screened: list[Screened], remote: str) -> list[str]:
    """What a push says about the checkpoints it took secrets out of (one line each, newly
    screened ones; a count of the others)."""
    out = []
    older = 0
    for s in screened:
        if s.clean:
            continue
        if not s.fresh:
            older += 1
            continue
        what = "; ".join(_file_line(f) for f in s.files)
        how = "withheld" if s.send is None else "sent redacted"
        out.append(f"checkpoint {s.id[:12]} {how}{': ' + what if what else ''}"
                   + (f" ({s.why})" if s.why else ""))
    if older:
        out.append(f"{older} checkpoint(s) screened before are sent redacted or withheld as then "
                   f"(`git oxide push --checkpoints --json {remote}` lists them)")
    return out


def _file_line(f: dict[str, Any]) -> str:
    return f"{f['path'] or 'its message'} " + redacted_reason(f).replace(" when it was pushed", "")


def _load(ctx: Context, digest: str) -> tuple[dict[str, Screened], int]:
    """The map's entries made under ``digest``, by the commit screened; and its count of lines."""
    out: dict[str, Screened] = {}
    try:
        text = (ctx.repo.oxide_dir / CACHE_FILE).read_text(encoding="utf-8")
    except OSError:
        return out, 0
    lines = text.splitlines()
    for line in lines:
        try:
            d = json.loads(line)
            if d.get("digest") == digest:
                oid = d.get("oid") or d["id"]
                out[oid] = Screened(d["id"], "", d.get("send"), d.get("files", []), d.get("why", ""),
                                    parent=d.get("parent"), tree=d.get("tree"), oid=oid)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a line cut by a crash: that checkpoint is screened again
    return out, len(lines)


def _save(ctx: Context, digest: str, new: list[Screened], *, whole: bool = False) -> None:
    """Append the new entries (one line each: concurrent pushes interleave whole lines), or
    (``whole``) replace the map by them."""
    path = ctx.repo.oxide_dir / CACHE_FILE
    text = "".join(json.dumps({"digest": digest, "id": s.id, "send": s.send, "files": s.files,
                               "parent": s.parent, "tree": s.tree, "oid": s.oid,
                               **({"why": s.why} if s.why else {})},
                              sort_keys=True) + "\n" for s in new)
    if whole:
        tmp = path.with_name(f"{CACHE_FILE}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return  # a read-only store: the next push screens them again
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
