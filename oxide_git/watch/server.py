"""The watcher's side of the checkpoint fast path (the client and the protocol: ``fastpath``).

A thread accepts connections on ``<git-common-dir>/oxide/run/watch.sock`` (folder 0700, socket
0600, peers of another uid refused), reads one bounded request with a timeout and queues it; the
watcher's own loop answers queued requests between its journal and import work, one at a time, so
a checkpoint never races the journal it reads and every pygit2/SQLite handle stays on one thread.
The answer runs the same code as the command (``cli.core.checkpoint_output``) on a fresh
repository and index handle with the client's cwd, clock and environment. Anything unexpected
answers ``F`` (the client then does the work itself) and is logged; nothing a client sends can
stop the watcher.
"""

from __future__ import annotations

import os
import queue
import socket
import stat
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from oxide_git.git.repo import Repo
from oxide_git.watch import fastpath

MAX_REQUEST = 1 << 20
READ_TIMEOUT = 2.0
GO_TIMEOUT = 2.0
# Process-wide settings a checkpoint depends on besides its arguments: when the client's differ
# from the watcher's, the client does the work itself.
_SAME_ENV_PREFIX = "GIT_"
_SAME_ENV = ("HOME", "XDG_CONFIG_HOME")
_ENV_IGNORED = ("GIT_EXEC_PATH",)  # set by `git` for the commands it runs, harmless


@dataclass
class Request:
    command: str
    cwd: str
    now_ms: int
    umask: int
    encodings: tuple[str, str, str, str]  # stdout encoding, errors, stderr encoding, errors
    args: list[str]
    env: dict[str, str]


def parse(body: bytes) -> Request:
    """A request body (ValueError when malformed)."""
    f = [os.fsdecode(x) for x in body.split(b"\0")]
    if len(f) < 9:
        raise ValueError("short request")
    argc = int(f[8])
    if argc < 0 or 9 + argc > len(f):
        raise ValueError("bad argument count")
    env = {}
    for kv in f[9 + argc:]:
        k, sep, v = kv.partition("=")
        if not sep:
            raise ValueError("bad environment entry")
        env[k] = v
    return Request(f[0], f[1], int(f[2]), int(f[3]), (f[4], f[5], f[6], f[7]), f[9:9 + argc], env)


def env_differs(client: dict[str, str], own: dict[str, str]) -> bool:
    keys = {k for k in (*client, *own) if k.startswith(_SAME_ENV_PREFIX) or k in _SAME_ENV}
    return any(client.get(k) != own.get(k) for k in keys if k not in _ENV_IGNORED)


Handler = Callable[[Request], tuple[int, bytes, bytes] | None]


class Server:
    """One listening socket for one watcher; ``serve_pending`` runs on the watcher's thread."""

    def __init__(self, common_dir: Path, log: Callable[[str], None], wake: Callable[[], None]) -> None:
        self.path = fastpath.socket_path(str(common_dir))
        self.log, self.wake = log, wake
        self.pending: queue.Queue[tuple[socket.socket, Request]] = queue.Queue()
        self.sock: socket.socket | None = None
        self.ino: int | None = None
        self.stop = threading.Event()

    def start(self) -> bool:
        """Listen (replacing a stale socket); False when another watcher already answers."""
        run = os.path.dirname(self.path)
        os.makedirs(run, mode=0o700, exist_ok=True)
        st = os.lstat(run)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            self.log(f"not serving checkpoints: {run} is not a folder of this user")
            return False
        os.chmod(run, 0o700)
        if os.path.lexists(self.path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.settimeout(1.0)
                fastpath.with_short_path(self.path, probe.connect)
                self.log("not serving checkpoints: another watcher answers on its socket")
                return False
            except OSError:
                os.unlink(self.path)  # stale: its watcher was killed
            finally:
                probe.close()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fastpath.with_short_path(self.path, sock.bind)
        os.chmod(self.path, 0o600)
        self.ino = os.lstat(self.path).st_ino
        sock.listen(16)
        sock.settimeout(0.25)  # so the accept loop sees `stop`
        self.sock = sock
        threading.Thread(target=self._accept_loop, name="oxide-watch-socket", daemon=True).start()
        return True

    def close(self) -> None:
        self.stop.set()
        try:
            if self.ino is not None and os.lstat(self.path).st_ino == self.ino:
                os.unlink(self.path)
        except OSError:
            pass
        if self.sock is not None:
            self.sock.close()
        while True:
            try:
                conn, _ = self.pending.get_nowait()
            except queue.Empty:
                break
            _answer_and_close(conn, b"F\n")

    def _accept_loop(self) -> None:
        assert self.sock is not None
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self.stop.is_set():
                    return
                continue
            try:
                self.pending.put((conn, self._read(conn)))
                self.wake()
            except _Hangup:  # a probe (is anyone listening?)
                conn.close()
            except Exception as e:  # a bad client: tell it to go away, keep serving
                self.log(f"refused a checkpoint request: {e}")
                _answer_and_close(conn, b"F\n")

    def _read(self, conn: socket.socket) -> Request:
        uid = fastpath.peer_uid(conn)
        if uid is not None and uid != os.getuid():
            raise PermissionError(f"peer uid {uid}")
        conn.settimeout(READ_TIMEOUT)
        buf = b""
        while b"\n" not in buf:
            chunk = conn.recv(256)
            if not chunk and not buf:
                raise _Hangup
            if not chunk or len(buf) > 64:
                raise ValueError("no request header")
            buf += chunk
        head, _, body = buf.partition(b"\n")
        magic, _, size = head.rpartition(b" ")
        if magic != fastpath.MAGIC or not size.isdigit() or int(size) > MAX_REQUEST:
            raise ValueError("not a request of this version")
        want = int(size)
        parts = [body]
        got = len(body)
        while got < want:
            chunk = conn.recv(min(65536, want - got))
            if not chunk:
                raise ValueError("short request")
            parts.append(chunk)
            got += len(chunk)
        return parse(b"".join(parts)[:want])

    def has_pending(self) -> bool:
        return not self.pending.empty()

    def serve_pending(self, handler: Handler) -> None:
        """Answer the queued requests, one at a time, on the calling (watcher's) thread."""
        while True:
            try:
                conn, req = self.pending.get_nowait()
            except queue.Empty:
                return
            try:
                conn.settimeout(GO_TIMEOUT)
                conn.sendall(b"R\n")
                if conn.recv(1) != b"G":  # the client gave up waiting: it does the work itself
                    continue
                try:
                    result = handler(req)
                except Exception:
                    self.log(f"checkpoint request failed (the client falls back):\n{traceback.format_exc()}")
                    result = None
                if result is None:
                    conn.sendall(b"F\n")
                else:
                    rc, out, err = result
                    conn.settimeout(30.0)
                    conn.sendall(b"D %d %d %d\n" % (rc, len(out), len(err)) + out + err)
            except OSError:
                pass
            finally:
                conn.close()


class _Hangup(Exception):
    pass


def _answer_and_close(conn: socket.socket, data: bytes) -> None:
    try:
        conn.settimeout(0.5)
        conn.sendall(data)
    except OSError:
        pass
    finally:
        conn.close()


def checkpoint_handler(common_dir: Path, repos: Mapping[str, Repo]) -> Handler:
    """Answer `git oxide checkpoint` and `git oxide search` as the commands would (None: let the
    client do it).

    ``repos`` are the watcher's open worktrees (top folder -> Repo): their pygit2 handles are
    warm (pack indexes and delta bases of HEAD's trees in libgit2's caches), which on a packed
    100,000-file tree is most of a checkpoint's time in a fresh process. libgit2 reads refs,
    HEAD and config from disk on each use and rescans packs on a miss, so nothing goes stale.
    """
    import click

    from oxide_git.cli import output
    from oxide_git.cli.core import checkpoint as checkpoint_command
    from oxide_git.cli.core import checkpoint_output
    from oxide_git.cli.output import use_store
    from oxide_git.cli.sessions import search as search_command
    from oxide_git.git.repo import find_repo
    from oxide_git.ops.search_command import output as search_output
    from oxide_git.store.context import Context
    from oxide_git.store.index import Index

    own = os.path.realpath(common_dir)
    kept: dict[str, tuple[Index, int]] = {}  # index.db path -> (open index, its inode)

    def _open_index(repo: Repo) -> Index | None:
        """The index kept open from the last request, while index.db is still that file."""
        path = str(repo.oxide_dir / "index.db")
        got = kept.pop(path, None)
        if got is None:
            return None
        try:
            if os.stat(path).st_ino == got[1]:
                return got[0]
        except OSError:
            pass
        got[0].close()
        return None

    def _keep_index(ctx: Context) -> None:
        if ctx._index is None:
            return
        try:
            kept[str(ctx._index.path)] = (ctx._index, os.stat(ctx._index.path).st_ino)
        except OSError:
            ctx.close()

    own_mask = os.umask(0o022)  # read once, on the watcher's thread before it serves
    os.umask(own_mask)

    def handle(req: Request) -> tuple[int, bytes, bytes] | None:
        command = {"checkpoint": checkpoint_command, "search": search_command}.get(req.command)
        if command is None or {"-h", "--help"} & set(req.args):
            return None
        if env_differs(req.env, dict(os.environ)) or any(req.env.get(k) for k in fastpath.REPO_ENV):
            return None
        if own_mask != req.umask:
            return None
        try:
            params = command.make_context(req.command, list(req.args)).params
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            return None  # the command prints the usage error itself
        repo = find_repo(Path(req.cwd), environ=req.env)
        if os.path.realpath(repo.common_dir) != own:
            return None
        warm = repos.get(str(repo.workdir))
        if warm == repo:
            repo = warm
        ctx = Context(repo, req.now_ms, dict(req.env), _open_index(repo))
        try:
            if req.command == "search":  # read-only: the index as the command would open it
                before = output._store
                use_store(ctx)  # ids abbreviated against this store, as the command does
                try:
                    out, err = search_output(ctx, params["query"], params["limit"], params["as_json"])
                finally:
                    use_store(before)
            else:
                out, err = checkpoint_output(ctx, params["message"], params["session"], params["kind"],
                                             params["as_json"])
        except BaseException:
            ctx.close()  # a fresh connection next time
            raise
        _keep_index(ctx)
        out_enc, out_errors, err_enc, err_errors = req.encodings
        return 0, out.encode(out_enc, out_errors), err.encode(err_enc, err_errors)

    return handle
