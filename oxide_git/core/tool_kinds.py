"""The one table of the agents' tools by kind, by name: the shell, writing a file, editing one,
reading, and the tools that never change a file (what ``blame`` leaves out of an interval's calls
before anything else about them is read). ``agents.tools`` classifies a call with it, for a
receiving agent to replay as its own tool. Stdlib only: the agents' modules cost a blame whose
intervals are all kept ~10 ms to import."""

from __future__ import annotations

SHELL = frozenset({"Bash", "bash", "shell", "run_shell_command", "exec_command", "shell_command",
                   "local_shell", "run_commands", "execute_command"})
WRITE = frozenset({"Write", "write", "write_file", "create_file", "create"})
EDIT = frozenset({"Edit", "edit", "replace", "str_replace", "str_replace_based_edit_tool", "MultiEdit"})
READ = frozenset({"Read", "read", "read_file", "view"})

# Tools that never change a file (reads, searches, plans, sub-agents: their own calls are theirs).
READ_ONLY = READ | frozenset({
    "Grep", "Glob", "LS", "grep", "glob", "list", "ls", "list_dir", "list_directory", "search",
    "search_file_content", "find_files", "read_many_files", "WebFetch", "WebSearch", "webfetch",
    "websearch", "web_search", "google_web_search", "web_fetch", "TodoWrite", "TodoRead",
    "todowrite", "todoread", "update_plan", "Task", "Agent", "task", "view_image", "ExitPlanMode",
    "BashOutput", "KillShell", "KillBash", "save_memory", "write_todos", "lsp", "codesearch",
    "skill", "Skill", "question", "AskUserQuestion",
})
