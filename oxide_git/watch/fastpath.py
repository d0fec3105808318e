"""`git oxide checkpoint` and `search` served by a running `git oxide watch` (the client side;
stdlib only).

Starting Python, click and pygit2 costs more than the checkpoint itself when `watch` keeps a
journal of changed paths. So the console script first asks the watcher over its unix socket
(``<git-common-dir>/oxide/run/watch.sock``; the folder is 0700, the socket 0600, both sides
check the peer's uid). The watcher runs the very same command code and sends back the exact
bytes to print and the exit code. Any doubt (no socket, a stale one, a refused connection, a
busy or slow watcher, an option it does not know, an error) returns None and the normal
in-process command runs instead, printing whatever it prints.

This module imports nothing beyond ``os``, ``sys``, ``socket`` and ``gitdirs`` (``json`` costs ~7 ms
to import); the protocol is a length-prefixed, NUL-separated request and a
``D <rc> <len-out> <len-err>`` answer. ``OXIDE_FASTPATH=0`` turns it off; ``OXIDE_FASTPATH=only``
(for tests) exits 125 instead of falling back.

Protocol: client -> ``MAGIC SP <len>\\n`` + body; watcher -> ``R\\n`` when it takes the request;
client -> ``G``; watcher -> ``D rc nout nerr\\n`` + stdout + stderr, or ``F\\n`` (fall back) at
any point. The watcher does nothing without ``G``, and a client that gave up waiting for ``R``
never sends it, so a timeout can never produce two checkpoints.
"""

from __future__ import annotations

import os
import sys

from oxide_git.git import gitdirs

MAGIC = b"oxide-fast 1"
RUN_DIR = ("oxide", "run")  # under the git common dir
SOCKET_NAME = "watch.sock"
READY_TIMEOUT = 0.5  # a watcher busy importing for longer: do it ourselves
RESULT_TIMEOUT = 120.0
MAX_PATH = 100  # sun_path is 108 bytes; longer paths go through /proc/self/fd/<dir>
REPO_ENV = gitdirs.REPO_ENV  # requests under these are not for the watcher
UNSERVED = 125  # exit code with OXIDE_FASTPATH=only when the watcher did not serve


def common_dir(cwd: str) -> str | None:
    """The git common dir of the worktree above ``cwd`` (None: not in a worktree)."""
    try:
        found = gitdirs.locate(cwd)
    except (OSError, ValueError):
        return None
    if found is None or found[1] is None:
        return None
    return gitdirs.common_dir(found[1])


def socket_path(common: str) -> str:
    return os.path.join(common, *RUN_DIR, SOCKET_NAME)


def peer_uid(sock: object) -> int | None:
    """The uid of the process at the other end (Linux SO_PEERCRED), or None where unknown."""
    import socket

    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, opt, 12)  # type: ignore[attr-defined]
    return int.from_bytes(raw[4:8], sys.byteorder)


def with_short_path(path: str, use: object) -> object:
    """Call ``use(path)``, through ``/proc/self/fd/<folder>`` when ``path`` is too long for AF_UNIX."""
    if len(os.fsencode(path)) < MAX_PATH:
        return use(path)  # type: ignore[operator]
    fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        return use(f"/proc/self/fd/{fd}/{os.path.basename(path)}")  # type: ignore[operator]
    finally:
        os.close(fd)


def _request(args: list[str], cwd: str, command: str = "checkpoint") -> bytes:
    mask = os.umask(0)
    os.umask(mask)
    now = os.environ.get("OXIDE_NOW")
    fields = [command.encode(), os.fsencode(cwd),
              str(int(now) if now and now.isdigit() else _now_ms()).encode(), str(mask).encode(),
              (sys.stdout.encoding or "utf-8").encode(), (sys.stdout.errors or "strict").encode(),
              (sys.stderr.encoding or "utf-8").encode(), (sys.stderr.errors or "strict").encode(),
              str(len(args)).encode(), *(os.fsencode(a) for a in args),
              *(k + b"=" + v for k, v in os.environb.items())]
    body = b"\0".join(fields)
    return MAGIC + b" %d\n" % len(body) + body


def _now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def _recv_line(sock: object, buf: bytearray) -> bytes:
    while b"\n" not in buf:
        chunk = sock.recv(4096)  # type: ignore[attr-defined]
        if not chunk or len(buf) > 256:
            raise OSError("short answer")
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return line


def _recv_exact(sock: object, buf: bytearray, n: int) -> bytes:
    while len(buf) < n:
        chunk = sock.recv(max(65536, n - len(buf)))  # type: ignore[attr-defined]
        if not chunk:
            raise OSError("short answer")
        buf += chunk
    out = bytes(buf[:n])
    del buf[:n]
    return out


def ask(args: list[str], cwd: str, command: str = "checkpoint") -> tuple[int, bytes, bytes] | None:
    """The watcher's answer to `git oxide COMMAND ARGS` run in ``cwd``, or None."""
    if any(os.environ.get(k) for k in REPO_ENV) or {"-h", "--help"} & set(args):
        return None
    common = common_dir(cwd)
    if common is None:
        return None
    path = socket_path(common)
    try:
        st = os.stat(os.path.dirname(path))
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            return None
        import socket

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.settimeout(READY_TIMEOUT)
        with_short_path(path, sock.connect)
        uid = peer_uid(sock)
        if uid is not None and uid != os.getuid():
            return None
        sock.sendall(_request(args, cwd, command))
        buf = bytearray()
        if _recv_line(sock, buf) != b"R":
            return None
        sock.sendall(b"G")  # from here on the watcher works: we wait for it
        sock.settimeout(RESULT_TIMEOUT)
        head = _recv_line(sock, buf).split(b" ")
        if len(head) != 4 or head[0] != b"D":
            return None
        rc, n_out, n_err = (int(x) for x in head[1:])
        return rc, _recv_exact(sock, buf, n_out), _recv_exact(sock, buf, n_err)
    except Exception:  # whatever it is, the command does the work itself
        return None
    finally:
        sock.close()


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def serve(command: str, args: list[str]) -> int | None:
    """Serve `git oxide COMMAND ARGS` through the watcher: the exit code, or None (do it here)."""
    mode = os.environ.get("OXIDE_FASTPATH", "")
    if mode == "0":
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    answer = ask(args, cwd, command)
    if answer is None:
        if mode == "only":
            _write(2, b"git oxide: %s not served by git oxide watch (OXIDE_FASTPATH=only)\n"
                   % command.encode())
            return UNSERVED
        return None
    rc, out, err = answer
    try:
        _write(1, out)
        _write(2, err)
    except BrokenPipeError:
        return 0
    return rc
