"""The watcher's side of the checkpoint fast path (the client and the protocol: ``fastpath``).

A thread accepts connections on ``<git-common-dir>/oxide/run/watch.sock`` (folder 0700, socket
0600, peers of another uid refused), reads one bounded request with a timeout and queues it; the
watcher's own loop answers queued requests between its journal and import work, one at a time, so
a checkpoint never races the journal it reads and every pygit2/SQLite handle stays on one thread.
The answer (``cli.watch``, which the CLI hands to the watcher) runs the same code as the command
(``cli.core.checkpoint_output``) on a fresh repository and index handle with the client's cwd,
clock and environment. Anything unexpected answers ``F`` (the client then does the work itself)
and is logged; nothing a client sends can stop the watcher.
"""

from __future__ import annotations

import os
import queue
import socket
import stat
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
