"""Which agent tools never change a file, by name: what ``blame`` leaves out of an interval's
calls before anything else about them is read (stdlib only: the agents' modules cost a blame
whose intervals are all kept ~10 ms to import)."""

from __future__ import annotations

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
