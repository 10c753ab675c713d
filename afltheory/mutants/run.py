"""The kill matrix: run checks under every mutant and record which verdicts each mutant flips.

A verdict *kills* a mutant when it is ``ok`` (passes, and its negative control fails) on the correct code and
is not ``ok`` — or missing because its check crashed — with the mutant injected. The mutation score is the
share of mutants killed by at least one verdict; a check whose verdicts kill nothing is flagged (it cannot
tell the correct code from any catalogued bug).

``kill_matrix(mutants=None, only=None, tier="quick", seed=0, jobs=1)`` -> ``KillMatrix``. The checks first run
on the correct code under ``probe()``, which records the rule classes and fault points the engines consult;
then every (mutant, check) pair whose check reaches the mutant runs in its own task (``jobs`` processes) under
``injected(mutant)``, writing its figures to a scratch directory. A pair whose check never reaches the mutant
is not run: the checks are deterministic (seeded), so its verdicts are the correct code's.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from .catalogue import CATALOGUE, CONTROLS, get, injected, probe
from .mutant import qualname

__all__ = [
    "MUTANT_ENV",
    "KillMatrix",
    "ONE_VERDICT_REASONS",
    "compare_markdown",
    "kill_matrix",
    "run_test",
    "run_under",
    "select_checks",
    "suite_kills",
]

#: the environment variable naming the mutant a pytest session runs under (tests/conftest.py injects it for
#: the whole session); set by ``run_test``
MUTANT_ENV = "AFLTHEORY_MUTANT"

#: mutants for which one killing verdict is all there can be, and why (``KillMatrix.weak_kills`` reports
#: every other mutant killed by fewer than two verdicts)
#: (empty since round 9: ``mocha.omega_not_inverted``, its one entry, is killed by laws.mocha_omega and
#: power_engines.mocha_omega_kkt)
ONE_VERDICT_REASONS: dict[str, str] = {}


def _repo_root() -> str:
    """The directory holding the ``afltheory`` package (and ``tests/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_test(test: str, mutant: str | None = None, timeout: float = 1800.0) -> dict:
    """Run the pytest node ``test`` (e.g. "tests/theory/test_bound_terms.py::test_theorem2_terms_hand",
    relative to the repository root) in a fresh ``python -m pytest`` process, with ``mutant`` injected for
    the whole session (None: the correct code). Returns {"rc": pytest's exit code, "passed": rc == 0,
    "failed": rc == 1 (a test failed or errored), "elapsed": s, "tail": the output's last lines}. Any other
    exit code (no such test, usage error, interrupted, timeout: rc −1) is neither a pass nor a failure, nor is
    a failure caused by the test injecting a mutant itself (``injected`` does not nest)."""
    import subprocess
    import sys

    if mutant is not None:
        mutant = get(mutant).name  # ValueError for an unknown name, before the subprocess
    root = _repo_root()
    env = {k: v for k, v in os.environ.items() if k != MUTANT_ENV}
    if mutant is not None:
        env[MUTANT_ENV] = mutant
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "", test]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, text = -1, f"timeout after {timeout} s"
    # a test that injects a mutant itself cannot run under another: its RuntimeError is no judgement
    nested = mutant is not None and "injected() does not nest" in text
    return {
        "rc": rc,
        "passed": rc == 0,
        "failed": rc == 1 and not nested,
        "elapsed": time.perf_counter() - t0,
        "tail": "\n".join(text.strip().splitlines()[-15:]),
    }


def suite_kills(
    mutants: Sequence[str] | None = None,
    jobs: int = 1,
    progress: Callable[[int, int, str | None, str], None] | None = None,
) -> dict[str, dict[str, dict]]:
    """Run each mutant's named tests (``Mutant.tests``) on the correct code and under the mutant (each in its
    own pytest process, ``jobs`` at a time). ``mutants``: names (default: every catalogued mutant naming
    tests). Returns {mutant: {test: {"baseline": run_test(test), "mutant": run_test(test, mutant),
    "killed": bool}}}: a test kills its mutant when it passes on the correct code and fails under the mutant
    (a test that fails on the correct code kills nothing)."""
    from concurrent.futures import ThreadPoolExecutor

    if jobs < 1:
        raise ValueError(f"jobs={jobs} must be >= 1")
    names = [get(m).name for m in mutants] if mutants is not None else [m for m in CATALOGUE if get(m).tests]
    tests = list(dict.fromkeys(t for m in names for t in get(m).tests))
    tasks = [(None, t) for t in tests] + [(m, t) for m in names for t in get(m).tests]
    results = {}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for j, (key, res) in enumerate(
            zip(tasks, ex.map(lambda mt: run_test(mt[1], mt[0]), tasks), strict=True)
        ):
            results[key] = res
            if progress is not None:
                progress(j + 1, len(tasks), key[0], key[1])
    out = {}
    for m in names:
        out[m] = {}
        for t in get(m).tests:
            base, mut = results[(None, t)], results[(m, t)]
            out[m][t] = {"baseline": base, "mutant": mut, "killed": base["passed"] and mut["failed"]}
    return out


def _runner():
    """(run_check, select) of the check runner (``afltheory.checks``)."""
    from afltheory.checks.runner import run_check, select_checks

    return run_check, select_checks


def select_checks(only: Sequence[str] | None = None, among: Sequence[str] | None = None) -> list[str]:
    """The registered check ids (or those ``among``) restricted to ``only`` (check or verdict ids), in report
    order."""
    return list(_runner()[1](only, among))


def run_under(
    mutant: str | None,
    check_id: str,
    tier: str = "quick",
    seed: int = 0,
    out: str | None = None,
    files: Sequence[str] = (),
) -> dict:
    """Run one check with ``mutant`` injected (None: the correct code, probed). Returns {"ok": {verdict id:
    bool}, "error": traceback or None, "elapsed": s, "seen": sorted rule classes / fault points the engines
    consulted (correct code only), "result": the runner's full result (correct code only)}. Figures go to
    ``out`` (default: a scratch directory). ``files``: user files registering checks (``afltheory verify``).
    """
    run_check = _runner()[0]
    t0 = time.perf_counter()
    seen, full = (), None
    with tempfile.TemporaryDirectory(prefix="afl-mutant-") as tmp:
        out = tmp if out is None else out
        os.makedirs(os.path.join(out, "figures"), exist_ok=True)
        if mutant is None:
            with probe() as consulted:
                res = run_check(check_id, tier, seed, out, files=files)
            seen = sorted(x if isinstance(x, str) else qualname(x) for x in consulted)
            full = res
        else:
            from .generated import applied

            for f in files:  # the claims a claim mutant edits live in the user files
                from afltheory.checks.registry import load_file

                load_file(f)
            with injected(mutant), applied(get(mutant)):
                res = run_check(check_id, tier, seed, out, files=files)
    return {
        "ok": {v["id"]: bool(v["ok"]) for v in res["verdicts"]},
        "error": res["error"],
        "refused": bool(res.get("refused", False)),
        "elapsed": time.perf_counter() - t0,
        "seen": list(seen),
        "result": full,
    }


@dataclass
class KillMatrix:
    """``baseline``: {check id: run_under(None, ...)}; ``runs``: {mutant: {check id: run_under(mutant,
    ...)}}."""

    checks: list[str]
    mutants: list[str]
    baseline: dict
    runs: dict
    tier: str = "quick"
    seed: int = 0
    elapsed: float = 0.0
    meta: dict = field(default_factory=dict)
    controls: list[str] = field(default_factory=list)  # equivalent mutants run alongside (must survive)
    test_runs: dict = field(default_factory=dict)  # {mutant: {test: ...}} of suite_kills (named tests run)

    # ------------------------------------------------------------------------------------------ derived
    def verdict_ids(self) -> list[str]:
        """Every verdict id of the correct-code run, in check order."""
        return [v for c in self.checks for v in self.baseline[c]["ok"]]

    def check_of(self) -> dict[str, str]:
        """{verdict id: the check that produced it}."""
        return {v: c for c in self.checks for v in self.baseline[c]["ok"]}

    def refused(self, mutant: str, check: str) -> bool:
        """Whether ``check`` refused ``mutant``: a backend it calls cannot represent the mutated rule
        (``UnsupportedRule``, e.g. the exact engine or the PEP given a rule overriding ``aggregate``). Such a
        check gives no verdict on the mutant: not a kill, and no artefact under an equivalent control."""
        return bool(self.runs[mutant][check].get("refused", False))

    def flipped(self, mutant: str) -> list[str]:
        """Verdict ids ok on the correct code and not ok (or missing: the check crashed) under ``mutant``;
        checks that refused the mutant (``refused``) are left out."""
        out = []
        for c in self.checks:
            if self.refused(mutant, c):
                continue
            base, run = self.baseline[c]["ok"], self.runs[mutant][c]["ok"]
            out += [v for v, ok in base.items() if ok and not run.get(v, False)]
        return out

    def suspect_verdicts(self) -> set[str]:
        """Verdicts that flip under an equivalent control (they react to the exact→Monte Carlo switch, e.g. by
        crashing on a rule the exact engine refuses, not to a bug)."""
        return {v for c in self.controls for v in self.flipped(c)}

    def _refused_by_exact(self, mutant: str) -> bool:
        return get(mutant).refused_by_exact  # not for components the exact engine never runs (EF, DIANA, …)

    def killed_by(self, mutant: str) -> list[str]:
        """Verdict ids that kill ``mutant``: flipped by it, except — for a rule mutant the exact engine
        refuses (as it refuses the controls) — the verdicts that also flip under an equivalent control."""
        out = self.flipped(mutant)
        if mutant in self.controls or not self._refused_by_exact(mutant):
            return out
        sus = self.suspect_verdicts()
        return [v for v in out if v not in sus]

    def killed_by_verdict(self, mutant: str) -> list[str]:
        """The kills of ``mutant`` (``killed_by``) made by a verdict that judged it: its check ran to the end
        and the verdict came out not ok. A verdict missing because its check crashed is left out (a crash is
        no judgement: a check that crashes on a bug would crash as well on a harmless change)."""
        cof = self.check_of()
        return [v for v in self.killed_by(mutant) if not self.runs[mutant][cof[v]]["error"]]

    def killed_by_crash(self, mutant: str) -> list[str]:
        """The kills of ``mutant`` that rest only on a crash of the verdict's check (see
        ``killed_by_verdict``)."""
        judged = set(self.killed_by_verdict(mutant))
        return [v for v in self.killed_by(mutant) if v not in judged]

    def killed_by_tests(self, mutant: str) -> list[str]:
        """The named tests (``Mutant.tests``) that kill ``mutant``: they passed on the correct code and failed
        under the mutant (empty when its tests were not run, see ``tests_run``)."""
        return [t for t, r in self.test_runs.get(mutant, {}).items() if r["killed"]]

    def tests_run(self, mutant: str) -> bool:
        """Whether the named tests of ``mutant`` were run (``kill_matrix(with_tests=...)``)."""
        return bool(self.test_runs.get(mutant))

    def weak_kills(self, min_verdicts: int = 2) -> dict[str, str]:
        """{mutant: why} for every mutant killed by fewer than ``min_verdicts`` verdicts (crash kills not
        counted) — with the catalogue's stated reason (``ONE_VERDICT_REASONS``) when one verdict is all there
        can be, else "no stated reason"."""
        out = {}
        for m in self.mutants:
            n = len(self.killed_by_verdict(m))
            if n < min_verdicts:
                why = ONE_VERDICT_REASONS.get(m, "no stated reason")
                if self.killed_by_tests(m):
                    why = "killed by the named tests " + ", ".join(self.killed_by_tests(m))
                crash = len(self.killed_by_crash(m))
                out[m] = (
                    f"{n} verdict kill{'s' if n != 1 else ''}"
                    + (f", {crash} by crash only" if crash else "")
                    + f": {why}"
                )
        return out

    def suspect_kills(self, mutant: str) -> list[str]:
        """Flipped verdicts not counted as kills of ``mutant`` (see ``killed_by``)."""
        kept = set(self.killed_by(mutant))
        return [v for v in self.flipped(mutant) if v not in kept]

    def kills(self) -> dict[str, list[str]]:
        """{verdict id: mutants it kills} (every baseline verdict, possibly with an empty list)."""
        k = {v: [] for v in self.verdict_ids()}
        for m in self.mutants:
            for v in self.killed_by(m):
                k[v].append(m)
        return k

    def check_kills(self) -> dict[str, list[str]]:
        """{check id: mutants killed by at least one of its verdicts}."""
        cof = self.check_of()
        k = {c: [] for c in self.checks}
        for m in self.mutants:
            for c in sorted({cof[v] for v in self.killed_by(m)}, key=self.checks.index):
                k[c].append(m)
        return k

    def exercised(self, mutant: str, check: str) -> bool:
        """Whether ``check`` reaches ``mutant`` at all (else the pair was not run: its result is the
        baseline's)."""
        return not self.runs[mutant][check].get("skipped", False)

    def crashed(self, mutant: str) -> list[str]:
        """Checks that crashed under ``mutant`` (other than by refusing it, see ``refused``)."""
        return [c for c in self.checks if self.runs[mutant][c]["error"] and not self.refused(mutant, c)]

    @property
    def killed(self) -> list[str]:
        """Mutants killed by at least one verdict or named test (``killed_by_tests``)."""
        return [m for m in self.mutants if self.killed_by(m) or self.killed_by_tests(m)]

    @property
    def reachable(self) -> list[str]:
        """Mutants at least one check reaches (the others cannot change any verdict: not scored)."""
        return [m for m in self.mutants if any(self.exercised(m, c) for c in self.checks)]

    def reachable_line(self, category: str | None = None) -> str:
        """ "k of n that reach these checks (p %); u do not", over the mutants of ``category`` (None: all)."""
        ms = [m for m in self.mutants if category is None or get(m).category == category]
        reach = [m for m in ms if m in set(self.reachable)]
        k = sum(1 for m in reach if m in set(self.killed))
        pct = f" ({100 * k / len(reach):.0f} %)" if reach else ""
        return f"{k} of {len(reach)} that reach these checks{pct}; {len(ms) - len(reach)} do not"

    @property
    def survivors(self) -> list[str]:
        """Mutants neither a verdict nor a named test kills."""
        return [m for m in self.mutants if not (self.killed_by(m) or self.killed_by_tests(m))]

    @property
    def killed_only_by_tests(self) -> list[str]:
        """Mutants no verdict kills and a named test does (bugs the checks cannot see: a looser bound)."""
        return [m for m in self.mutants if not self.killed_by(m) and self.killed_by_tests(m)]

    @property
    def verdict_score(self) -> float:
        """Share of mutants killed by at least one verdict that judged them (crash kills not counted; NaN for
        an empty catalogue)."""
        n = sum(1 for m in self.mutants if self.killed_by_verdict(m))
        return n / len(self.mutants) if self.mutants else float("nan")

    @property
    def score(self) -> float:
        """Mutation score: the share of mutants killed (NaN for an empty catalogue)."""
        return len(self.killed) / len(self.mutants) if self.mutants else float("nan")

    def false_kills(self) -> dict[str, list[str]]:
        """{equivalent control: verdicts that 'kill' it} — a verdict listed here reacts to the mutation
        machinery itself: its kills of rule mutants are suspect."""
        return {c: self.flipped(c) for c in self.controls if self.flipped(c)}

    def baseline_failures(self) -> list[str]:
        """Verdicts not ok on the correct code (they cannot kill anything)."""
        return [v for c in self.checks for v, ok in self.baseline[c]["ok"].items() if not ok]

    def summary(self) -> str:
        """Score line, then survivors, controls flipped, idle checks and baseline failures (one per line)."""
        s = (
            f"mutation score: {len(self.killed)}/{len(self.mutants)} mutants killed "
            f"({100 * self.score:.0f} %) by {len(self.checks)} checks ({self.tier} tier, seed {self.seed})"
        )
        s += "\nreachable mutants killed: " + self.reachable_line()
        for cat in dict.fromkeys(get(m).category for m in self.mutants if get(m).category.startswith("gen")):
            s += f"\n  {cat} mutants: " + self.reachable_line(cat)
        reach = set(self.reachable)
        if self.survivors:
            shown = [m for m in self.survivors if m in reach]
            hidden = len(self.survivors) - len(shown)
            s += "\nsurvivors: " + (", ".join(shown) or "none among the reachable")
            s += f" (and {hidden} that no check reaches)" if hidden else ""
        if self.killed_only_by_tests:
            s += "\nkilled only by named tests (no verdict can see them): " + ", ".join(
                f"{m} by {', '.join(self.killed_by_tests(m))}" for m in self.killed_only_by_tests
            )
        crash_only = [m for m in self.killed if self.killed_by(m) and not self.killed_by_verdict(m)]
        if crash_only:
            s += "\nkilled only by a crash (no verdict judged them): " + ", ".join(crash_only)
        weak = {m: w for m, w in self.weak_kills().items() if m not in self.survivors and m not in crash_only}
        if weak:
            s += "\nkilled by fewer than 2 verdicts: " + "; ".join(f"{m} ({w})" for m, w in weak.items())
        false = self.false_kills()
        if false:
            s += "\nequivalent controls killed (kills there may be artefacts): " + ", ".join(
                f"{c} by {', '.join(v)}" for c, v in false.items()
            )
        idle = [c for c, ms in self.check_kills().items() if not ms]
        if idle:
            s += "\nchecks that kill no mutant: " + ", ".join(idle)
        bad = self.baseline_failures()
        if bad:
            s += "\nverdicts not ok on the correct code (cannot kill): " + ", ".join(bad)
        return s

    # ------------------------------------------------------------------------------------------ output
    def to_dict(self) -> dict:
        """Everything as JSON-ready data: score, per-mutant kills, per-verdict/per-check kills, raw runs."""
        return {
            "tier": self.tier,
            "seed": self.seed,
            "elapsed": self.elapsed,
            "checks": self.checks,
            "mutants": [
                {
                    "name": m,
                    "category": CATALOGUE[m].category if m in CATALOGUE else "",
                    "description": get(m).description,
                    "kind": get(m).kind,
                    "killed_by": self.killed_by(m),
                    "killed_by_verdict": self.killed_by_verdict(m),
                    "killed_by_crash": self.killed_by_crash(m),
                    "crashed_checks": self.crashed(m),
                    "tests": list(get(m).tests),
                    "killed_by_tests": self.killed_by_tests(m),
                }
                for m in self.mutants
            ],
            "score": self.score,
            "verdict_score": self.verdict_score,
            "weak_kills": self.weak_kills(),
            "killed": len(self.killed),
            "total": len(self.mutants),
            "verdict_kills": self.kills(),
            "check_kills": self.check_kills(),
            "baseline_failures": self.baseline_failures(),
            "controls": {
                c: {"description": get(c).description, "killed_by": self.killed_by(c)} for c in self.controls
            },
            "baseline": {c: {k: v for k, v in r.items() if k != "result"} for c, r in self.baseline.items()},
            "runs": self.runs,
            "test_runs": self.test_runs,
            **self.meta,
        }

    @classmethod
    def from_json(cls, path: str) -> KillMatrix:
        """Read back a matrix written by ``write_json`` (e.g. to re-derive its tables)."""
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        names = [m["name"] for m in d["mutants"]]
        return cls(
            d["checks"],
            names,
            d["baseline"],
            d["runs"],
            d["tier"],
            d["seed"],
            d["elapsed"],
            {},
            list(d.get("controls", {})),
            dict(d.get("test_runs", {})),
        )

    def write_json(self, path: str) -> str:
        """Write ``to_dict()`` to ``path`` (directories created); returns ``path``."""
        from afltheory._io import write_json

        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write_json(path, self.to_dict(), indent=1)
        return path

    def _cell(self, mutant, check):
        cof = self.check_of()
        n = sum(1 for v in self.killed_by(mutant) if cof[v] == check)
        k = sum(1 for v in self.suspect_kills(mutant) if cof[v] == check)
        if self.refused(mutant, check):
            return "refused"
        if self.runs[mutant][check]["error"]:
            return "crash" + (" (not counted)" if k and not n else "")
        if not self.exercised(mutant, check):
            return "—"
        return (f"✗{n}" if n else "·") + (f" (+{k}?)" if k else "")

    def _tests_cell(self, mutant):
        """The "killed by tests" cell: the killing tests' names, `·` none of its tests kills it, `not run`
        (named tests not run: ``kill_matrix(with_tests=True)``), `—` it names no test."""
        if not get(mutant).tests:
            return "—"
        if not self.tests_run(mutant):
            return "not run"
        k = self.killed_by_tests(mutant)
        return ", ".join(f"`{t.rsplit('::', 1)[-1]}`" for t in k) if k else "·"

    def _matrix_row(self, mutant, head, tests, killed):
        """One markdown row of the kill matrix: ``head`` (its first two columns), the mutant's cell in every
        check's column, then the "killed by tests" and "killed" cells."""
        cells = [self._cell(mutant, c) for c in self.checks]
        return f"| {head} | " + " | ".join(cells) + f" | {tests} | {killed} |"

    def to_markdown(self) -> str:
        """The kill-matrix section: score, mutant × check matrix, verdict → mutants killed, idle checks."""
        ck = self.check_kills()
        lines = [
            "## Verdict power: mutation kill matrix",
            "",
            f"**{self.summary().splitlines()[0]}.** A verdict *kills* a mutant when it is ok on the "
            "correct code and not ok with the mutant injected (`afltheory.mutants`; cell: number of "
            "the check's verdicts that flip, `·` none, `—` the check never reaches the mutated code, "
            "`refused` a backend the check calls cannot represent the mutated rule and says so (no "
            "verdict, not a kill), `crash` the check crashed; *killed by tests*: the mutant's named tests "
            "(`Mutant.tests`) that pass on the correct code and fail under it, `·` none does, `not run`, `—` "
            f"it names none). Run time {self.elapsed:.0f} s.",
            "",
        ]
        lines += [
            "| mutant | category | " + " | ".join(self.checks) + " | killed by tests | killed |",
            "|---|---|" + "---|" * len(self.checks) + "---|---|",
        ]
        for m in self.mutants:
            killed = "yes" if m in self.killed else "**NO**"
            lines.append(self._matrix_row(m, f"`{m}` | {get(m).category}", self._tests_cell(m), killed))
        lines.append(
            "| **mutants killed** | | "
            + " | ".join((str(len(ck[c])) if ck[c] else "**0**") for c in self.checks)
            + f" | {sum(1 for m in self.mutants if self.killed_by_tests(m))} | {len(self.killed)} |"
        )
        for m in self.controls:
            survived = "**flipped: artefact**" if self.flipped(m) else "survives ✓"
            lines.append(self._matrix_row(m, f"`{m}` (equivalent control) | control", "—", survived))
        if self.controls:
            lines += [
                "",
                "Equivalent controls (last rows) are the correct rules overriding an imperative hook with "
                "the base's own code: the exact engine refuses them, so a check falls back to Monte Carlo "
                "(or crashes if it calls the exact engine directly). They must survive. A verdict that flips "
                "under a control reacts to that engine switch, so its flips under the rule mutants the exact "
                "engine also refuses are not counted as kills (shown as `(+k?)` / `crash (not counted)`).",
            ]
        lines += ["", "### Mutants killed per verdict", "", "| verdict | mutants killed |", "|---|---|"]
        for v, ms in self.kills().items():
            lines.append(f"| `{v}` | {', '.join(ms) if ms else '**none** (kills no mutant)'} |")
        idle = [c for c, ms in ck.items() if not ms]
        lines += [
            "",
            "Checks that kill no mutant (decoration until they do): "
            + (", ".join(f"`{c}`" for c in idle) if idle else "none")
            + ".",
        ]
        if self.survivors:
            lines += [
                "",
                "Surviving mutants: "
                + ", ".join(f"`{m}` ({get(m).description})" for m in self.survivors)
                + ".",
            ]
        bad = self.baseline_failures()
        if bad:
            lines += [
                "",
                "Verdicts not ok on the correct code (they cannot kill): "
                + ", ".join(f"`{v}`" for v in bad)
                + ".",
            ]
        lines += ["", "### Catalogue", "", "| mutant | kind | acts in | description |", "|---|---|---|---|"]
        for m in self.mutants:
            mu = get(m)
            lines.append(f"| `{m}` | {mu.kind} | {', '.join(mu.engines)} | {mu.description} |")
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """The kill-matrix section as HTML (score, matrix, verdict → mutants killed)."""
        import html

        ck = self.check_kills()
        h = [
            "<h2>Verdict power: mutation kill matrix</h2>",
            f"<p><b>{html.escape(self.summary().splitlines()[0])}</b>. A verdict kills a mutant when it is "
            f"ok on the correct code and not ok with the mutant injected (— : the check never reaches the "
            f"mutated code).</p>",
            "<table><tr><th>mutant</th><th>category</th>"
            + "".join(f"<th>{html.escape(c)}</th>" for c in self.checks)
            + "<th>killed by tests</th><th>killed</th></tr>",
        ]
        for m in self.mutants:
            cells = "".join(f"<td>{self._cell(m, c)}</td>" for c in self.checks)
            k = "yes" if m in self.killed else "<b>NO</b>"
            t = html.escape(self._tests_cell(m).replace("`", ""))
            h.append(
                f"<tr><td><code>{html.escape(m)}</code></td><td>{html.escape(get(m).category)}</td>{cells}"
                f"<td>{t}</td><td>{k}</td></tr>"
            )
        h.append(
            "<tr><td><b>mutants killed</b></td><td></td>"
            + "".join(f"<td>{len(ck[c]) if ck[c] else '<b>0</b>'}</td>" for c in self.checks)
            + f"<td>{sum(1 for m in self.mutants if self.killed_by_tests(m))}</td>"
            + f"<td>{len(self.killed)}</td></tr></table>"
        )
        h.append("<h3>Mutants killed per verdict</h3><table><tr><th>verdict</th><th>mutants killed</th></tr>")
        for v, ms in self.kills().items():
            h.append(
                f"<tr><td><code>{html.escape(v)}</code></td><td>"
                f"{html.escape(', '.join(ms)) if ms else '<b>none</b>'}</td></tr>"
            )
        h.append("</table>")
        return "\n".join(h) + "\n"


def compare_markdown(before: KillMatrix, after: KillMatrix) -> str:
    """Per check: the mutants it killed in ``before`` and in ``after`` (markdown), and the scores."""
    kb, ka = before.check_kills(), after.check_kills()
    lines = [
        f"Mutation score: {len(before.killed)}/{len(before.mutants)} before, "
        f"{len(after.killed)}/{len(after.mutants)} after.",
        "",
        "| check | killed before | killed after | mutants killed after |",
        "|---|---|---|---|",
    ]
    for c in dict.fromkeys([*before.checks, *after.checks]):
        b = "—" if c not in kb else str(len(kb[c]))
        a = "—" if c not in ka else str(len(ka[c]))
        lines.append(f"| `{c}` | {b} | {a} | {', '.join(ka.get(c, [])) or 'none'} |")
    return "\n".join(lines) + "\n"


def _reaches(mutant, check: str, base: dict) -> bool:
    """Whether ``check`` (its correct-code run ``base``) reaches ``mutant``: a rule or fault it consulted, or
    (a claim mutant) a claim its function reads."""
    if mutant.claim_edit is not None:
        from afltheory.checks.registry import CHECKS

        from .generated import reaches

        return check in CHECKS and reaches(mutant, CHECKS[check].func)
    return mutant.exercised_by(base.get("seen", ()))


def _task(args):
    mutant, check_id, tier, seed, out, *files = args
    return mutant, check_id, run_under(mutant, check_id, tier, seed, out, files=tuple(files))


def _payload_task(payload: dict) -> dict:
    """One (mutant, check) run as an executor task (``afltheory.sweep.executors``): plain data in and out."""
    mutant, check_id, res = _task(tuple(payload["args"]))
    return {"mutant": mutant, "check": check_id, "result": res}


def _payload(task: tuple) -> dict:
    """The executor payload of a task tuple; ``id`` is a short digest of (mutant, check) (Dask keys)."""
    import hashlib

    key = f"{task[0]}|{task[1]}".encode()
    return {"id": hashlib.sha1(key).hexdigest()[:16], "args": list(task)}


def _code_digest(checks: Sequence[str], files: Sequence[str]) -> str:
    """SHA-1 of afltheory's source files, the source files of the modules defining ``checks`` and the user
    ``files``: a journal entry is reused only for the same code."""
    import hashlib
    import sys

    from afltheory.checks.registry import CHECKS

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
    mods = {CHECKS[c].module for c in checks if c in CHECKS}
    paths += sorted({getattr(sys.modules.get(m), "__file__", None) or "" for m in mods} - {""})
    paths += list(files)
    h = hashlib.sha1()
    for p in paths:
        h.update(p.encode())
        with open(p, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def _read_journal(path: str, stamp: list) -> dict:
    """{(mutant, check): run} recorded in ``path`` for ``stamp`` (unreadable or other-stamp lines skipped)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                e = json.loads(line)
            except ValueError:  # a line cut short by the interruption
                continue
            if isinstance(e, dict) and e.get("stamp") == stamp:
                out[(e["mutant"], e["check"])] = e["run"]
    return out


def _journal(path: str | None, stamp: list | None, mutant: str | None, check: str, run: dict) -> dict:
    """Append one finished run to the journal (if any); returns ``run``."""
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(
                json.dumps({"stamp": stamp, "mutant": mutant, "check": check, "run": run}, default=str) + "\n"
            )
    return run


def kill_matrix(
    mutants: Sequence[str] | None = None,
    only: Sequence[str] | None = None,
    tier: str = "quick",
    seed: int = 0,
    jobs: int = 1,
    baseline: dict | None = None,
    progress: Callable[[int, int, str | None, str], None] | None = None,
    controls: bool | None = None,
    out: str | None = None,
    files: Sequence[str] = (),
    executor: str | object = "local",
    scheduler: str | None = None,
    journal: str | None = None,
    with_tests: bool | None = None,
    generated: bool | None = None,
) -> KillMatrix:
    """Run the checks ``only`` (default: all registered) on the correct code and under each of ``mutants``
    (default: the whole catalogue) in ``jobs`` processes. ``controls``: also run the equivalent mutants
    (``CONTROLS``; default: when ``mutants`` is None). ``baseline``: {check id: run_under(None, ...)} already
    measured (skips the correct-code runs). ``progress``: callable(done, total, mutant, check id) or None.
    ``out``: where the correct-code runs put their figures (default: a scratch directory). ``files``: user
    files whose registered checks are run (``afltheory verify FILE.py --mutants``); ``only`` then selects
    among them (default: all of their checks).
    ``executor``: "local" (``jobs`` processes of this machine), "dask" (a Dask scheduler at ``scheduler``,
    or a LocalCluster of ``jobs`` workers) or an ``afltheory.sweep.executors.Executor``; each (mutant, check)
    pair is one task, the same on every executor (the checks are seeded), so the kill matrix is the same
    (user ``files`` must be readable at the same path on the workers).
    ``journal``: a JSON-lines file that records every finished run as it completes; runs already recorded
    there for the same code (a digest of afltheory's and the checks' source files), tier and seed are not
    run again — an interrupted analysis resumes where it stopped (``check --mutants`` keeps one in --out
    until the analysis completes).
    ``with_tests``: also run the mutants' named tests (``Mutant.tests``, ``suite_kills``: the "killed by
    tests" column) — True: of every mutant naming tests; None (default): of those fewer than two verdicts
    kill (a bug the checks cannot see is then judged by its tests, not reported a survivor); False: none."""
    if with_tests not in (None, True, False):
        raise ValueError(f"with_tests={with_tests!r} must be True, False or None")
    ctl = list(CONTROLS) if (controls if controls is not None else mutants is None) else []
    files = tuple(os.path.abspath(f) for f in files)
    gen = []
    if files and (generated if generated is not None else mutants is None):
        from .generated import generate_for_files

        gen = [g.name for g in generate_for_files(files)]
    if mutants is not None:  # named controls run as controls (never scored as mutants)
        names = [get(m).name for m in mutants]
        ctl = list(dict.fromkeys(ctl + [n for n in names if n in CONTROLS]))
        mutants = [n for n in names if n not in CONTROLS]
        mutants += [g for g in gen if g not in mutants]
    else:
        mutants = list(CATALOGUE) + gen
    if jobs < 1:
        raise ValueError(f"jobs={jobs} must be >= 1")
    if isinstance(executor, str) and executor not in ("local", "dask"):
        raise ValueError(f"executor={executor!r} must be 'local' or 'dask' (or an Executor instance)")
    if scheduler and executor != "dask":
        raise ValueError(f"scheduler={scheduler!r} is only used with executor='dask'")
    if files:
        from afltheory.checks.registry import load_file

        ids = [i for f in files for i in load_file(f)]
        checks = select_checks(only, ids)
    else:
        checks = select_checks(only)
    t0 = time.perf_counter()
    base = dict(baseline or {})
    runs = {m: {} for m in mutants + ctl}
    stamp = [_code_digest(checks, files), tier, seed] if journal else None
    done_before = _read_journal(journal, stamp) if journal else {}
    ex = dist = None
    if executor == "local":
        ex = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else None
    else:
        from ..sweep.executors import make_executor

        dist = make_executor(executor, jobs=jobs, scheduler=scheduler)
    try:

        def results_of(tasks):
            if dist is None:
                yield from (map(_task, tasks) if ex is None else ex.map(_task, tasks))
                return
            for p, res, err in dist.imap_unordered(_payload_task, [_payload(t) for t in tasks]):
                if err is not None:
                    raise RuntimeError(
                        f"task (mutant {p['args'][0]}, check {p['args'][1]}) failed on the "
                        f"{dist.name} executor:\n{err}"
                    )
                yield res["mutant"], res["check"], res["result"]

        def execute(tasks):
            fresh = [t for t in tasks if (t[0], t[1]) not in done_before]
            old = [(t[0], t[1], done_before[(t[0], t[1])]) for t in tasks if (t[0], t[1]) in done_before]
            for j, (m, c, r) in enumerate(
                [*old, *((m, c, _journal(journal, stamp, m, c, r)) for m, c, r in results_of(fresh))]
            ):
                (base if m is None else runs[m])[c] = r
                if progress is not None:
                    progress(j + 1, len(tasks), m, c)

        # phase 1: the correct code, probed for what each check reaches; phase 2: the mutants it reaches
        execute([(None, c, tier, seed, out, *files) for c in checks if c not in base])
        todo = []
        for m in mutants + ctl:
            for c in checks:
                if _reaches(get(m), c, base[c]):
                    todo.append((m, c, tier, seed, None, *files))
                else:  # a deterministic check that never reaches the mutated code: the baseline's verdicts
                    runs[m][c] = {
                        "ok": dict(base[c]["ok"]),
                        "error": base[c]["error"],
                        "elapsed": 0.0,
                        "skipped": True,
                    }
        todo.sort(key=lambda t: -base[t[1]]["elapsed"])  # longest first: better packing over the jobs
        execute(todo)
    finally:
        if ex is not None:
            ex.shutdown()
        if dist is not None and dist is not executor:
            dist.close()
    km = KillMatrix(
        checks,
        mutants,
        base,
        runs,
        tier,
        seed,
        0.0,
        {
            "runs_executed": len(todo),
            "runs_skipped": len(mutants + ctl) * len(checks) - len(todo),
            "executor": executor if isinstance(executor, str) else getattr(executor, "name", "custom"),
        },
        ctl,
    )
    if with_tests is not False:
        named = [m for m in mutants if get(m).tests and (with_tests or len(km.killed_by_verdict(m)) < 2)]
        if named:
            km.test_runs = suite_kills(named, jobs=jobs, progress=progress)
    km.elapsed = time.perf_counter() - t0
    return km
