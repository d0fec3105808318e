"""Each mended or added guard test, shown to fail on the code it guards when that code is broken.

Every proof breaks one thing in a private copy of the tree (``sandbox``), runs the tests that
must notice, and expects them red; the unbroken copy must be green first. Run:
``python -m tests.mutation.prove [NAME...]``. A proof whose code has moved so that its text no
longer appears is reported as stale (update it), never counted as proved.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import sandbox


@dataclass(frozen=True)
class Proof:
    name: str
    path: str  # the file broken
    old: str  # text that must occur exactly once
    new: str
    tests: tuple[str, ...]


T = "tests/"
PROOFS = [
    Proof("pull is journaled", "oxide_git/ops/share.py", "    if res.moved:", "    if False:",
          (T + "ops/test_share.py::test_undo_after_pull_reverts_the_pull_and_nothing_before_it",)),
    Proof("undo refuses when refs moved since", "oxide_git/store/journal.py", "            if not force:",
          "            if False:",
          (T + "cli/test_history.py::test_undo_refuses_when_the_session_moved_since_unless_forced",
           T + "ops/test_share.py::test_undo_of_a_pull_refuses_when_a_pulled_ref_moved_since")),
    Proof("undo --force keeps the newer state", "oxide_git/store/journal.py",
          "            if current is not None:  # the newer state",
          "            if current is not None and after is None:  # the newer state",
          (T + "cli/test_history.py::test_undo_refuses_when_the_session_moved_since_unless_forced",)),
    Proof("undo --dry-run undoes nothing", "oxide_git/ops/undo.py",
          "    if dry_run:\n        return UndoResult(_summary(entry), files, reverse.refs, True)\n", "",
          (T + "cli/test_history.py::test_undo_dry_run_changes_nothing_then_undo_does",)),
    Proof("undo never points a ref at a pruned object", "oxide_git/store/journal.py",
          "        if target is not None and target not in git:", "        if False:",
          (T + "ops/test_rm.py::test_rm_with_forks",)),
    Proof("export redacts again", "oxide_git/export/sessions.py", "    r = redact.redactor_for(ctx)\n", "    r = None\n",
          (T + "store/test_redact.py::test_export_redacts_on_its_own_what_was_stored_unredacted",)),
    Proof("pull skips a ref that is not a session id", "oxide_git/ops/share.py",
          'return None if _SAFE_ID.match(name[len(refs.SESSIONS):]) else "not a session id, left alone"',
          "return None",
          (T + "ops/test_share.py::test_pull_skips_a_remote_ref_that_is_not_a_session_id",)),
    Proof("diverged memory keeps ours", "oxide_git/ops/share.py", "            keep = mine or other",
          "            keep = other or mine",
          (T + "ops/test_share.py::test_diverged_memory_keeps_ours_and_takes_their_other_files",)),
    Proof("resume --into keeps the agent's newer file", "oxide_git/ops/resume.py",
          "        if went_on is not None and went_on(path):", "        if False:",
          (T + "ops/test_resume_into.py::test_resume_into_never_overwrites_what_the_agent_wrote_since",)),
    Proof("the Claude hook raising after its work", "oxide_git/hooks/agent_hooks.py",
          "            claude(argv[1], payload)\n",
          "            claude(argv[1], payload)\n            raise RuntimeError('broken')\n",
          (T + "hooks/test_agent_hooks.py::test_claude_hook_commands_checkpoint_and_import",)),
    Proof("the hook logging its failures", "oxide_git/hooks/agent_hooks.py",
          '        _log(payload.get("cwd"), f"agent hook {argv!r} failed:\\n{traceback.format_exc()}")',
          "        pass",
          (T + "hooks/test_agent_hooks.py::test_hook_never_blocks_on_bad_input",)),
    Proof("codex notify failing quietly", "oxide_git/hooks/agent_hooks.py",
          "                codex(payload)\n", "                codex(payload)\n                raise KeyError('x')\n",
          (T + "hooks/test_agent_hooks.py::test_codex_notify_chains_and_restores",)),
    Proof("doctor reports an index behind git", "oxide_git/ops/doctor.py", "        if stale or stale_cps:",
          "        if False:", (T + "ops/test_doctor.py::test_index_behind_git_is_reported_and_fixed",
                                T + "ops/test_doctor.py::test_a_session_written_without_the_index_is_behind_too")),
    Proof("doctor --fix mends the index", "oxide_git/ops/doctor.py", '            findings[-1]["level"] = "fixed"',
          "            pass", (T + "cli/test_cli.py::test_corrupt_index_says_reindex",)),
    Proof("resume --into names the agent's command", "oxide_git/agents/codex/export.py", '"codex", "resume"',
          '"codex", "exec"', (T + "ops/test_resume_into.py::test_round_trip_through_the_agents_own_store[codex]",
                              T + "ops/test_resume_into.py::test_cross_agent_resume_writes_a_readable_session[codex]")),
    Proof("a rewind into another worktree writes there", "oxide_git/ops/rewind.py",
          "restore.apply(", "(lambda *a, **k: 0)(",
          (T + "cli/test_history.py::test_rewind_refuses_other_worktree_without_force",)),
    Proof("git.objects reads every delta version as pygit2 does", "oxide_git/store/logread.py",
          "    return Tip(session, commit, tree, count(objects, tree))",
          "    return Tip(session, commit, tree[::-1], count(objects, tree))",
          (T + "git/test_objects.py::test_reads_deltas_after_an_aggressive_gc_and_through_alternates",)),
    Proof("the watcher's overflow handler", "oxide_git/watch/watcher.py",
          '        logging.getLogger("watchdog").addHandler(overflow)\n', "",
          (T + "watch/test_watch.py::test_lost_file_events_rebuild_the_journal",)),
    Proof("an uninitialised repository's hook queues nothing", "oxide_git/resources/hook-tmpl",
          '[ -d "$CD/oxide" ] || exit $rc\n', "mkdir -p \"$CD/oxide\"\n",
          (T + "hooks/test_hooks.py::test_disabled_or_uninitialised_does_nothing",)),
    Proof("the watcher outlives a deleted store", "oxide_git/watch/watcher.py",
          '                self.log(f"{path} is gone; watching for it to come back")\n                return False',
          '                self.log(f"{path} is gone; watching for it to come back")\n                raise SystemExit(0)',
          (T + "watch/test_watch.py::test_daemon_imports_checkpoints_prompts_and_stops",)),
    Proof("codex notify keeps the user's chained notify (through git oxide agent-hook)",
          "oxide_git/cli/capture.py", 'raw = sys.argv[sys.argv.index("agent-hook") + 1:] if "agent-hook" in sys.argv else list(args)',
          "raw = list(args)",
          (T + "hooks/test_agent_hooks_config.py::test_codex_notify_runs_the_chained_command_and_imports_the_turn",)),
    Proof("an entry after a torn journal line is not glued to it", "oxide_git/store/journal.py",
          "        torn = False\n        if size:", "        torn = False\n        if False:",
          (T + "store/test_journal.py::test_an_operation_journaled_after_a_torn_line_is_still_undone",)),
    Proof("a killed restore's temp files are swept", "oxide_git/git/restore.py",
          '                    if stale.name.startswith(".oxide-tmp-") and not stale.name.startswith(mine):',
          "                    if False:",
          (T + "git/test_restore_guards.py::test_temp_files_of_a_killed_restore_are_swept_ours_are_not_left",)),
    Proof("doctor sees an index missing a table", "oxide_git/ops/doctor.py",
          '                conn.execute(f"SELECT 1 FROM {table} LIMIT 1")', "                pass",
          (T + "ops/test_doctor_damage.py::test_an_index_missing_a_table_is_unreadable_and_fix_rebuilds_it",)),
    Proof("a damaged notes ref is never pushed as a deletion", "oxide_git/hooks/impl.py",
          "        return False\n", "        return True\n",
          (T + "hooks/test_hook_impl_failures.py::test_a_damaged_notes_ref_never_deletes_the_remotes_notes",)),
    Proof("a bracket in a notify string ends nothing", "oxide_git/hooks/agent_hooks.py",
          "                return i, j\n", "                return i, len(lines)\n",
          (T + "hooks/test_agent_hooks_edges.py::test_a_bracket_inside_a_notify_string_does_not_swallow_the_rest_of_the_config",)),
]


def prove(tree: Path, p: Proof) -> str:
    target = tree / p.path
    original = target.read_text()
    if original.count(p.old) != 1:
        return "stale (the text to break is not there once)"
    ok, out = sandbox.run_tests(tree, list(p.tests), timeout=300)
    if not ok:
        return "not proved: the tests fail on the unbroken code\n" + out
    target.write_text(original.replace(p.old, p.new))
    try:
        ok, out = sandbox.run_tests(tree, list(p.tests), timeout=300)
    finally:
        target.write_text(original)
    return "NOT PROVED: green on broken code" if ok else "proved: red on broken code"


def main(argv: list[str]) -> int:
    chosen = [p for p in PROOFS if not argv or p.name in argv]
    with tempfile.TemporaryDirectory(prefix="oxide-prove-") as d:
        tree = sandbox.make(Path(d) / "tree")
        bad = 0
        for p in chosen:
            verdict = prove(tree, p)
            bad += not verdict.startswith("proved")
            print(f"{p.name}: {verdict}", flush=True)
    print(f"{len(chosen) - bad} proved, {bad} not")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
