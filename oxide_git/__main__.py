"""``python -m oxide_git``: what the hook shims exec."""

from __future__ import annotations

from oxide_git.entry import main

main()
