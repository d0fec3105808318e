"""``python -m oxide_git``: what the hook shims exec."""

from __future__ import annotations

from .entry import main

main()
