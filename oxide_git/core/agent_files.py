"""The files the agents keep their own sessions in, inside a worktree: code operations leave them.

A rewind of the code (or an undo of one) must never put an agent's transcript back to an older
state: that would wipe the conversation written since. Of the four agents only Aider writes into
the worktree (its chat history, its input history, and the LLM log when asked for one); Claude
Code, Codex and OpenCode keep their sessions outside the repository (``~/.claude/projects``,
``$CODEX_HOME/sessions``, OpenCode's data folder), so nothing of theirs is in a worktree.
The Aider modules take the names from here; ``$AIDER_*`` overrides are honoured. Pure.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

# Aider's file names, defined here (stdlib only) so that a rewind does not import the importer
# to learn them; the Aider modules take them from here.
AIDER_HISTORY = ".aider.chat.history.md"
AIDER_INPUT_HISTORY = ".aider.input.history"
AIDER_LLM_HISTORY = ".aider.llm.history"  # `aider --llm-history-file`, the name its docs use


def session_files(environ: Mapping[str, str] | None = None) -> set[str]:
    """Worktree-relative paths (any folder) that hold an agent's own session."""
    names = {AIDER_HISTORY, AIDER_INPUT_HISTORY, AIDER_LLM_HISTORY}
    env = environ or {}
    for key in ("AIDER_CHAT_HISTORY_FILE", "AIDER_INPUT_HISTORY_FILE", "AIDER_LLM_HISTORY_FILE"):
        value = env.get(key)
        if value and not posixpath.isabs(value):
            names.add(posixpath.normpath(value))
    return names


def is_session_file(path: str, names: set[str]) -> bool:
    """``path`` (worktree-relative, '/'-separated) is one of ``names``, at the top or in a folder
    (Aider writes its files where it was started: a subproject's folder too)."""
    return path in names or posixpath.basename(path) in names
