"""How a command's failure reaches the user, without click: ``error:``/``hint:`` for an error they
can act on, a logged traceback and exit status 3 for anything unexpected.

The click CLI (``cli.OxideGroup``) and the console script's fast paths share it, so a command
fails the same way whichever path ran it.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from oxide_git import __version__
from oxide_git.core.errors import DiskFull, OxideError

UNEXPECTED = 3
INTERRUPTED = 130


def report(err: OxideError) -> None:
    sys.stderr.write(f"error: {err.message}\n")
    if err.hint:
        sys.stderr.write(f"hint: {err.hint}\n")


def log_unexpected() -> str | None:
    """Write the traceback to oxide.log in the repository (or the temp dir); return its path."""
    from oxide_git.git.repo import find_repo

    try:
        log_dir = find_repo(Path.cwd()).oxide_dir
        log_dir.mkdir(parents=True, exist_ok=True)
    except (OxideError, OSError):
        log_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    path = log_dir / "oxide.log"
    try:
        import platform
        import traceback

        with open(path, "a") as f:
            f.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} git-oxide {__version__} "
                    f"python {platform.python_version()} {platform.platform()}\n")
            f.write(f"argv: {sys.argv!r}\n")
            f.write(traceback.format_exc())
    except OSError:
        return None
    return str(path)


def unexpected() -> int:
    """Report the exception being handled as a bug (traceback logged); the exit status."""
    where = log_unexpected()
    sys.stderr.write("error: unexpected error in git oxide\n")
    if where:
        sys.stderr.write(f"hint: the details are in {where}; please report them\n")
    else:  # no log could be written (a read-only folder): the end of the traceback, here
        import traceback

        tail = traceback.format_exc().rstrip("\n").splitlines()[-TRACEBACK_LINES:]
        sys.stderr.write("".join(f"  {line}\n" for line in tail))
        sys.stderr.write("hint: the log could not be written; please report the lines above\n")
    return UNEXPECTED


TRACEBACK_LINES = 8


def guarded(fn: Callable[[], object], passthrough: tuple[type[BaseException], ...] = ()) -> int:
    """Run a command's work; its exit status, every failure reported as the CLI reports it
    (``passthrough``: exceptions left to the caller)."""
    try:
        fn()
    except passthrough:
        raise
    except OxideError as e:
        report(e)
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return INTERRUPTED
    except BrokenPipeError:
        return 0
    except OSError as e:
        full = disk_full(e)
        if full is None:
            return unexpected()
        report(full)
        return full.exit_code
    except Exception:
        return unexpected()
    return 0


def disk_full(e: OSError) -> DiskFull | None:
    """A full disk (or quota) as an error the user can act on; None for any other OSError."""
    if e.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return DiskFull(_folder(e.filename), hint="free some space and run the command again; what it "
                    "had not written whole was not kept (`git oxide doctor` checks the store)")


def _folder(filename: object) -> str:
    """The folder a failed write was in: its file's, else this repository's git folder (a write
    to an open file names no file), else the current one."""
    if isinstance(filename, (str, bytes)) and filename:
        path = Path(os.fsdecode(filename))
        return str(path if path.is_dir() else path.parent)
    from oxide_git.git.repo import find_repo

    try:
        return str(find_repo(Path.cwd()).common_dir)
    except (OxideError, OSError):
        return os.getcwd()
