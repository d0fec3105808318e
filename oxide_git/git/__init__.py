"""Git access: the repository's folders, refs, objects and packs, status, notes, worktree writes."""
