"""`make mutate`: mutation testing of the modules that guard users' work, with cosmic-ray.

For each module, cosmic-ray's operators list every mutant (one small change: ``<`` for ``<=``,
``and`` for ``or``, a number off by one, a ``not`` added, an exception handler that catches
nothing, a loop that never runs...). Each mutant is written into a private copy of the tree
(``sandbox``: the real tree is never touched) and the module's own tests run there, the `git
oxide` processes and hooks they start included. A mutant the tests fail on is killed; one they
pass on survived, and must be listed in ``survivors.txt`` with the reason it cannot matter, or
be killed by a better test.

Which test reaches which line is measured once per run (``reach``: the selected test files under
coverage, each test's lines and those of the processes it starts in its own context). A mutant
runs first against the tests that reach its line, the ones that killed most mutants so far first
(most mutants die there, in seconds); one that survives them faces the rest of the module's list
too, since a test can depend on a line it did not reach while measured (a cache another test
filled, an object built at import). Mutants on lines no test of the selection reaches are not
run: they survive by definition.

    python -m tests.mutation.run                 # every module, every mutant
    python -m tests.mutation.run redact rm       # some modules
    python -m tests.mutation.run --sample 8      # 8 mutants per module (seeded): what CI runs
    python -m tests.mutation.run --ci            # the sample, over the modules listed in CI_MODULES

The operator set is cosmic-ray's, less the replacements that say nothing new (see ``keep``).
Exit status 1 when a mutant survived that survivors.txt does not explain.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import reach, sandbox

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
T = "tests/"
# module -> the tests that guard it (the first ones kill most mutants fastest)
MODULES: dict[str, tuple[str, ...]] = {
    "store/redact": (T + "store/test_redact_walk.py", T + "store/test_redact.py", T + "store/test_secretgate_clearing.py", T + "store/test_secretgate.py"),
    "store/redact_rules": (T + "store/test_redact_rules.py", T + "store/test_redact.py", T + "store/test_redact_walk.py"),
    "store/secretgate": (T + "store/test_secretgate_clearing.py", T + "store/test_secretgate.py", T + "store/test_redact.py"),
    "ops/share": (T + "ops/test_share.py", T + "ops/test_share_edges.py", T + "ops/test_pull_many.py",
              T + "ops/test_pull_screening.py"),
    "ops/remote_refs": (T + "ops/test_pull_many.py", T + "ops/test_share_edges.py", T + "ops/test_share.py",
                    T + "ops/test_pull_screening.py"),
    "store/notes": (T + "store/test_notes.py", T + "hooks/test_hooks.py", T + "ops/test_share.py", T + "export/test_export.py"),
    "store/notesmerge": (T + "store/test_notes.py", T + "ops/test_share.py"),
    "ops/gc": (T + "ops/test_gc.py", T + "ops/test_rm.py"),
    "store/retention": (T + "store/test_retention.py", T + "ops/test_gc.py"),
    "ops/rm": (T + "ops/test_rm.py",),
    "ops/memory": (T + "ops/test_memory.py", T + "ops/test_memory_edges.py", T + "ops/test_share.py"),
    "store/journal": (T + "store/test_journal.py", T + "cli/test_history.py", T + "ops/test_rm.py", T + "ops/test_memory.py",
                T + "ops/test_share.py"),
    "ops/undo": (T + "store/test_journal.py", T + "cli/test_history.py", T + "ops/test_undo_keeps.py", T + "ops/test_rm.py",
             T + "ops/test_memory.py", T + "ops/test_share.py"),
    "git/restore": (T + "git/test_restore_apply.py", T + "git/test_restore_trees.py", T + "git/test_restore_guards.py", T + "git/test_restore_diff.py",
                T + "cli/test_history.py"),
    "ops/rewind": (T + "ops/test_rewind_conflicts.py", T + "ops/test_rewind_edges.py", T + "cli/test_history.py", T + "store/test_journal.py",
               T + "ops/test_memory.py", T + "ops/test_gc.py"),
    "ops/resume": (T + "ops/test_resume_into.py", T + "ops/test_resume_guards.py", T + "ops/test_resume_rewound.py",
               T + "ops/test_resume_context_kept.py",
               T + "ops/test_resume_rewind_reach.py", T + "cli/test_history.py",
               T + "ops/test_memory.py"),
    "ops/doctor": (T + "ops/test_doctor.py", T + "ops/test_doctor_damage.py", T + "cli/test_cli.py", T + "ops/test_gc.py"),
    "hooks/agent_hooks": (T + "hooks/test_agent_hooks_edges.py", T + "hooks/test_agent_hooks.py", T + "hooks/test_agent_hooks_config.py",
                    T + "hooks/test_agent_hooks_copilot.py"),
    "hooks/impl": (T + "hooks/test_hook_impl.py", T + "hooks/test_hook_impl_failures.py", T + "hooks/test_hooks.py"),
    "hooks/install": (T + "hooks/test_hooks_report.py", T + "hooks/test_hooks_install.py", T + "hooks/test_hooks.py"),
}
# What CI samples: modules whose every survivor is explained, each against its most direct tests
# only (the whole selection is `make mutate`'s), so that the sample takes minutes.
CI_MODULES: dict[str, tuple[str, ...]] = {
    "ops/rm": (T + "ops/test_rm.py",),
    "store/notesmerge": (T + "store/test_notes.py",),
    "ops/undo": (T + "store/test_journal.py", T + "cli/test_history.py", T + "ops/test_undo_keeps.py"),
    "store/journal": (T + "store/test_journal.py", T + "cli/test_history.py"),
    "store/secretgate": (T + "store/test_secretgate_clearing.py", T + "store/test_secretgate.py"),
    "store/redact": (T + "store/test_redact_walk.py", T + "store/test_redact.py"),
    "store/redact_rules": (T + "store/test_redact_rules.py", T + "store/test_redact.py", T + "store/test_redact_walk.py"),
}

# Selective mutation: one replacement per operator says what the others would (a test that
# notices `a + b` becoming `a - b` notices `a * b`); the comparisons keep their boundary and
# their negation, the unary operators their removal.
_BINARY = {"Add_Sub", "Sub_Add", "Mul_Div", "Div_Mul", "FloorDiv_Mul", "Mod_FloorDiv", "Pow_Mul",
           "LShift_RShift", "RShift_LShift", "BitOr_BitAnd", "BitAnd_BitOr", "BitXor_BitOr"}
_COMPARE = {"Eq_NotEq", "NotEq_Eq", "Lt_LtE", "LtE_Lt", "Gt_GtE", "GtE_Gt", "Is_IsNot", "IsNot_Is",
            "In_NotIn", "NotIn_In"}


def keep(operator: str) -> bool:
    op = operator.split("/", 1)[1]
    kind, _, which = op.partition("_")
    if kind == "ReplaceBinaryOperator":
        return which in _BINARY
    if kind == "ReplaceComparisonOperator":
        return which in _COMPARE
    if kind == "ReplaceUnaryOperator":
        return which.startswith("Delete_") or which == "USub_UAdd"
    return True


@dataclass(frozen=True)
class Mutant:
    module: str  # oxide_git/x.py
    operator: str
    occurrence: int
    line: int
    text: str  # the source line, stripped: how survivors.txt names it
    statement: int  # the first line of the innermost statement holding it: what coverage counts
    after: str = ""  # the next line, stripped: tells apart two lines that read the same

    def names(self, mutated: str | None = None) -> list[tuple[str, str, str]]:
        """How survivors.txt may name it: by its line (every mutant of the operator there), and by
        its line ``=> the line as mutated`` (this mutant only)."""
        texts = [self.text, f"{self.text} >> {self.after}"]
        if mutated is not None:
            texts += [f"{t} => {mutated}" for t in texts]
        return [(self.module, self.operator, t) for t in texts]


Span = tuple[tuple[int, int], tuple[int, int]]


def _spans(source: str) -> tuple[list[Span], list[Span], list[Span]]:
    """(annotations, arithmetic expressions, statements) of a module, as ((line, col), (end line,
    end col))."""
    import ast

    annotations: list[Span] = []
    arithmetic: list[Span] = []
    statements: list[Span] = []

    def span(n: ast.AST) -> Span:
        return ((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0))  # type: ignore[attr-defined]

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(span(node.annotation))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(span(node.returns))
        elif isinstance(node, ast.AnnAssign):
            annotations.append(span(node.annotation))
        if isinstance(node, (ast.BinOp, ast.AugAssign)):
            arithmetic.append(span(node))
        if isinstance(node, ast.stmt):
            statements.append(span(node))
    return annotations, arithmetic, statements


def _statement(line: int, statements: list[Span]) -> int:
    """The first line of the innermost statement over ``line`` (a continuation line of a call,
    a decorator's line...): coverage reports a statement by its first line only."""
    holding = [(b[0] - a[0], a[0]) for a, b in statements if a[0] <= line <= b[0]]
    return min(holding)[1] if holding else line


def _within(pos: tuple[int, int], spans: list[Span]) -> bool:
    return any(a <= pos < b for a, b in spans)


def mutants(tree: Path, module: str) -> list[Mutant]:
    """The module's mutants under the operator set, less those that cannot run differently:
    inside annotations (never evaluated: every module has ``from __future__ import
    annotations``), and "binary operators" that are no arithmetic (a signature's bare ``*``)."""
    from cosmic_ray.commands.init import _all_work_items

    rel = f"oxide_git/{module}.py"
    source = (tree / rel).read_text()
    lines = source.splitlines()
    annotations, arithmetic, statements = _spans(source)
    out = []
    for item in _all_work_items([tree / rel], {}):
        m = item.mutations[0]
        pos = tuple(m.start_pos)
        if not keep(m.operator_name) or _within(pos, annotations):  # type: ignore[arg-type]
            continue
        if "ReplaceBinaryOperator" in m.operator_name and not _within(pos, arithmetic):  # type: ignore[arg-type]
            continue
        line = m.start_pos[0]
        after = lines[line].strip() if line < len(lines) else ""
        out.append(Mutant(rel, m.operator_name, m.occurrence, line, lines[line - 1].strip(),
                          _statement(line, statements), after))
    return out


def stale_entries(explained: dict[tuple[str, str, str], str], modules: list[str]) -> list[str]:
    """Entries of ``modules`` whose source line (and next line) no module line reads any more."""
    out = []
    for module, operator, text in explained:
        if module.removeprefix("oxide_git/").removesuffix(".py") not in modules:
            continue
        src = [ln.strip() for ln in (ROOT / module).read_text().splitlines()]
        first, _, after = text.split(" => ")[0].partition(" >> ")
        if not any(s == first and (not after or src[i + 1:i + 2] == [after]) for i, s in enumerate(src)):
            out.append(f"{module} || {operator} || {text}")
    return out


def survivors_file() -> dict[tuple[str, str, str], str]:
    """survivors.txt: ``module || operator || source line || why it cannot matter`` per line; the
    source line may be followed by `` >> the next line`` where two lines read the same, and by
    `` => the line as mutated`` to name one mutant of the line only."""
    out = {}
    for raw in (HERE / "survivors.txt").read_text().splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        module, operator, text, why = (p.strip() for p in raw.split(" || ", 3))
        out[(module, operator, text)] = why
    return out


def _mutate(original: str, m: Mutant) -> str | None:
    from cosmic_ray.mutating import MutationVisitor
    from cosmic_ray.plugins import get_operator

    try:
        out: str | None = MutationVisitor.mutate_code(original, get_operator(m.operator)(), m.occurrence)
    except Exception:  # cosmic-ray cannot apply it (its ExceptionReplacer on a dotted name): no mutant
        return None
    return out


def apply(tree: Path, m: Mutant) -> str | None:
    """Write the mutant into the copy; returns the original text (None: no such mutant)."""
    path = tree / m.module
    original = path.read_text()
    mutated = _mutate(original, m)
    if mutated is None:
        return None
    path.write_text(mutated)
    return original


def mutated_line(tree: Path, m: Mutant) -> str:
    """The mutant's line as mutated, stripped (how survivors.txt names one mutant of a line)."""
    out = _mutate((tree / m.module).read_text(), m)
    lines = (out or "").splitlines()
    return lines[m.line - 1].strip() if m.line <= len(lines) else ""


def _failed(output: str) -> list[str]:
    """The node ids pytest's short summary says failed (``FAILED id - why``, ``ERROR id``)."""
    return [ln.split(" ", 1)[1].split(" - ", 1)[0] for ln in output.splitlines()
            if ln.startswith(("FAILED ", "ERROR "))]


def run_module(tree: Path, module: str, sample: int | None, seed: int, explained: dict, log,  # type: ignore[no-untyped-def,type-arg]
               reached: reach.Reach, tests: tuple[str, ...] | None = None,
               kills: Counter[str] | None = None, only: set[tuple[str, str, int]] | None = None,
               ) -> dict:  # type: ignore[type-arg]
    """Every mutant of ``module`` (or a seeded sample), each against the tests of its selection
    that reach its line, those that killed most mutants so far first, then the fastest."""
    t0 = time.monotonic()
    rel = f"oxide_git/{module}.py"
    files = tests or MODULES[module]
    selection = [t for t in reached.seconds if t.split("::", 1)[0] in files]
    kills = Counter() if kills is None else kills
    if not selection:
        log(f"{module}: no test of its selection passes")
        return {"module": module, "error": "no test reaches it"}
    every = mutants(tree, module)
    chosen = every if sample is None else random.Random(f"{seed}:{module}").sample(every, min(sample, len(every)))
    if only is not None:
        chosen = [m for m in chosen if (m.module, m.operator, m.occurrence) in only]
    counts = {"killed": 0, "survived": 0, "explained": 0, "not reached": 0, "timeout": 0}
    unexplained: list[dict[str, object]] = []
    ran = late = 0

    def order(tests: list[str]) -> list[str]:
        return sorted(tests, key=lambda t: (-kills[t], reached.seconds[t]))

    for i, m in enumerate(chosen):
        if i and i % 25 == 0:
            log(f"  {module}: {i}/{len(chosen)} ({time.monotonic() - t0:.0f} s)")
        picked = order(reached.tests_for(rel, (m.line, m.statement), selection))
        mutated = mutated_line(tree, m)
        why = next((explained[k] for k in m.names(mutated) if k in explained), None)
        if not picked:
            outcome = "not reached"
        else:
            original = apply(tree, m)
            if original is None:
                continue
            try:
                budget = 20 + 2 * sum(reached.seconds[t] for t in picked)  # a mutant that loops: killed
                passed, output = sandbox.run_tests(tree, picked, timeout=budget)
                rest = [t for t in order(selection) if t not in set(picked)]
                if passed and rest and why is None:
                    # A test can depend on the line without reaching it while measured: a cache
                    # or an object another test built first. A survivor faces the whole list
                    # (one survivors.txt explains has faced it when its entry was written).
                    budget = 20 + 2 * sum(reached.seconds[t] for t in rest)
                    passed, output = sandbox.run_tests(tree, rest, timeout=budget)
                    late += not passed
            finally:
                (tree / m.module).write_text(original)
            ran += 1
            outcome = "survived" if passed else ("timeout" if output == "timeout" else "killed")
            for t in _failed(output):
                kills[t] += 1
        if outcome in ("survived", "not reached"):
            if why is not None:
                counts["explained"] += 1
                continue
            unexplained.append({**m.__dict__, "mutated": mutated})
            log(f"  SURVIVED {m.module}:{m.line} {m.operator} #{m.occurrence} ({outcome}): {m.text} => {mutated}")
        counts[outcome] += 1
    total = sum(counts.values())
    score = (counts["killed"] + counts["timeout"]) / max(1, total - counts["explained"])
    took = time.monotonic() - t0
    log(f"{module}: {total} mutants, " + ", ".join(f"{v} {k}" for k, v in counts.items())
        + f"; {score:.0%} of the unexplained killed ({took:.0f} s, {ran} run, {late} killed only by "
        f"tests that did not reach the line, {60 * total / max(took, 1e-9):.1f} mutants/min)")
    return {"module": module, "mutants": total, **counts, "score": round(score, 3), "seconds": round(took),
            "killed_unreached": late,
            "unexplained": unexplained}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutation.run")
    ap.add_argument("modules", nargs="*", help=f"of: {', '.join(MODULES)}")
    ap.add_argument("--sample", type=int, help="mutants per module, chosen at random (seeded)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--ci", action="store_true", help="the CI form: --sample 5 over CI_MODULES")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--retry", type=Path, help="only the unexplained survivors of an earlier --json")
    a = ap.parse_args(argv)
    only = None
    if a.retry:
        earlier = json.loads(a.retry.read_text())
        only = {(u["module"], u["operator"], u["occurrence"]) for r in earlier for u in r.get("unexplained", [])}
        a.modules = a.modules or [r["module"] for r in earlier if r.get("unexplained")]
    by_name = {m.rpartition("/")[2]: m for m in MODULES}  # `rm` for `ops/rm`: the module's own name
    modules = [by_name.get(m, m) for m in a.modules] or (list(CI_MODULES) if a.ci else list(MODULES))
    sample = a.sample or (5 if a.ci else None)
    for m in modules:
        if m not in MODULES:
            ap.error(f"unknown module {m!r}")
    explained = survivors_file()
    for entry in stale_entries(explained, modules):
        print(f"survivors.txt: no line reads this any more (remove the entry): {entry}", flush=True)

    def log(text: str) -> None:
        print(text, flush=True)

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="oxide-mutate-") as d:
        tree = sandbox.make(Path(d) / "tree")
        selections = {m: (CI_MODULES.get(m) if a.ci else None) or MODULES[m] for m in modules}
        files = list(dict.fromkeys(f for fs in selections.values() for f in fs))
        reached = reach.measure(tree, files, log)
        for nodeid in reached.failing:
            log(f"  {nodeid} fails or skips on the unmutated code: left out")
        kills: Counter[str] = Counter()
        results = []
        for m in modules:  # written after each module: a run stopped half-way keeps what it did
            results.append(run_module(tree, m, sample, a.seed, explained, log, reached, selections[m], kills,
                                      only))
            if a.json:
                a.json.write_text(json.dumps(results, indent=1))
    took = time.monotonic() - t0
    n = sum(r.get("mutants", 0) for r in results)
    print(f"mutation: {n} mutants in {took / 60:.1f} min ({60 * n / max(took, 1e-9):.1f} mutants/min, "
          f"the measured run of the tests included)")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1))
    bad = sum(len(r.get("unexplained", [])) + ("error" in r) for r in results)
    print(f"mutation: {len(results)} module(s), {bad} unexplained survivor(s) or failure(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
