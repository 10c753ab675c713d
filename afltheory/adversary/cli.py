"""``afltheory adversary CLAIM [--budget N] [--seed S] [--json FILE] [--out DIR]``: worst-case search."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__all__ = ["add_parser", "run", "search_seeds"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``afltheory adversary CLAIM ...`` to an argparse subparsers object (without importing the claims:
    they pull in sympy, and every ``afltheory`` command builds this parser)."""
    from ..sweep.executors import add_executor_arguments

    p = sub.add_parser(
        "adversary",
        help="search a claim's assumption class for its worst case (exact engine)",
        description="Search the assumption class of CLAIM for the largest measured/bound "
        "ratio; a "
        "ratio > 1 is confirmed by Monte Carlo before it is called a violation.",
    )
    p.add_argument(
        "claim",
        metavar="CLAIM",
        nargs="?",
        help="claim id: thm2, thm3, thm4, cor1, cor2, cor3, lemma2, "
        "drift or a registered one (an unknown id lists them)",
    )
    p.add_argument("--budget", type=int, default=2000, help="exact evaluations (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="run a search whose first batch projects more than 30 min (refused otherwise, with the "
        "projection)",
    )
    p.add_argument("--json", metavar="FILE", help="write the result (with the instance as explicit arrays)")
    p.add_argument(
        "--out", metavar="DIR", help="write the two figures (search progress, worst instance) here"
    )
    p.add_argument(
        "--replicates",
        type=int,
        default=1000,
        help="Monte Carlo runs confirming a violation",
    )
    p.add_argument(
        "--min-gap",
        type=float,
        default=None,
        help="f(x_0) − f* at least this fraction of the class's Delta (1: no start near x*)",
    )
    p.add_argument(
        "--isolate",
        choices=("transient", "sigma_L", "sigma_G"),
        help="search the sub-class where only this group of terms is non-zero (tightness per term)",
    )
    p.add_argument(
        "--hessian",
        choices=("shared", "per_worker"),
        default=None,
        help="one Hessian for all workers (σ_G exact) or one per worker (client drift; σ_G on a ball)",
    )
    p.add_argument("--rotate", action="store_true", help="dense Hessians (searched rotations)")
    for flag, key in (
        ("--dim", "dim"),
        ("--num-workers", "num_workers"),
        ("--m", "m"),
        ("--max-delay", "max_delay"),
        ("--K-max", "K_max"),
        ("--rounds", "rounds"),
    ):
        p.add_argument(
            flag,
            dest=f"cls_{key}",
            type=int,
            default=None,
            metavar="N",
            help=f"assumption class: {key} (default: the claim's class)",
        )
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help="N independent searches (seeds SEED … SEED+N−1, the budget each); the worst is "
        "reported (default 1)",
    )
    add_executor_arguments(
        p,
        jobs_help="run the --seeds searches in this many processes",
        executor_help="where the --seeds searches run: local processes (default) or Dask (LocalCluster of "
        "--jobs workers, or --scheduler ADDR)",
    )
    p.add_argument(
        "--arrivals",
        nargs="+",
        default=None,
        metavar="KIND",
        help="assumption class: allowed arrival laws (uniform, biased, fixed, cyclic, schedule, periodic; "
        "default: the claim's class)",
    )
    p.add_argument(
        "--journal",
        metavar="FILE",
        default=None,
        help="record every evaluated batch in FILE (JSON lines); rerunning the same command with it resumes "
        "an interrupted search where it stopped (with --seeds: FILE.seedS per seed)",
    )
    p.add_argument(
        "--progress", action="store_true", help="print the evaluations done and the best ratio on stderr"
    )
    p.add_argument(
        "--scaling",
        type=float,
        default=None,
        metavar="SECONDS",
        help="after the box search, follow the open directions (M/m, T, 1/eta_L, 1/eta, tau, K, d) by "
        "doubling for this many seconds (a --file claim: the open directions of its AssumptionClass; exact "
        "moments, else Monte Carlo; 0: off; default 90 with the default budget 2000 or more, else 0)",
    )
    p.add_argument("--list", action="store_true", help="list the claims and exit")
    p.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="FILE.py",
        help="a Python file defining Claim objects (afltheory.claims); CLAIM may then be one of "
        "their ids, or any afltheory.claims.paper id: searched by the generic adversary "
        "(afltheory.adversary.generic, exact engine, hypothesis-targeted)",
    )
    p.set_defaults(func=run)


def _search_task(task: dict) -> object:
    """One seeded search (an executor task; module level so executors can pickle it)."""
    from .claims import get_claim
    from .search import search

    return search(
        get_claim(task["claim"]),
        budget=task["budget"],
        seed=task["seed"],
        assumptions=task["cls"],
        replicates=task["replicates"],
        journal=task.get("journal"),
    )


def search_seeds(
    claim: str,
    cls: object,
    *,
    seeds: list[int],
    budget: int,
    replicates: int,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    journal: str | None = None,
) -> list:
    """The seeded searches of ``claim`` over ``cls`` (one task per seed on ``executor``: "local" = ``jobs``
    processes, 1 = this one; "dask" = a Dask scheduler at ``scheduler`` or a LocalCluster of ``jobs``
    workers), in seed order. Each search depends only on its seed, so the results do not depend on the
    executor. ``journal``: seed s journals to ``journal.seed{s}`` (resumable, see ``search``)."""
    from ..sweep.executors import make_executor

    tasks = [
        {
            "id": f"{claim}-seed{s}",
            "claim": claim,
            "cls": cls,
            "seed": s,
            "budget": budget,
            "replicates": replicates,
            "index": j,
            "journal": None if journal is None else f"{journal}.seed{s}",
        }
        for j, s in enumerate(seeds)
    ]
    if executor == "local" and jobs == 1:
        return [_search_task(t) for t in tasks]
    out = [None] * len(tasks)
    with make_executor(executor, jobs=jobs, scheduler=scheduler) as ex:
        for t, res, err in ex.imap_unordered(_search_task, tasks):
            if err is not None:
                raise RuntimeError(f"adversary search {t['id']} failed on the {ex.name} executor:\n{err}")
            out[t["index"]] = res
    return out


def run(args: argparse.Namespace) -> int:
    """The ``adversary`` subcommand: search the claim's worst case, print and write the result; exit
    status."""
    from .claims import CLAIMS, get_claim
    from .search import search

    if args.list:
        for k, c in CLAIMS.items():
            print(f"{k:8s} {c.title}  {c.reference}")
        return 0
    from .._io import (
        MAX_SEED,
        check_output_dir,
        check_output_file,
        check_ranges,
        refuse_overlap,
    )

    check_ranges(
        args,
        {
            "budget": (1, 10**12, "--budget"),
            "seed": (0, MAX_SEED, "--seed"),
            "replicates": (1, 10**9, "--replicates"),
            "seeds": (1, 10**6, "--seeds"),
            "jobs": (1, 4096, "--jobs"),
            **{k: (1, 10**6, "--" + k[4:].replace("_", "-")) for k in vars(args) if k.startswith("cls_")},
        },
    )
    _check_scaling(args)  # before any search: a bad --scaling must not cost the box search
    if not args.claim:
        raise ValueError("CLAIM is missing: give a claim id (afltheory adversary --list lists them)")
    if args.json is not None:  # before the search: an unusable path (or "") must not cost the run
        check_output_file(args.json, "--json")
    if args.out is not None:
        check_output_dir(args.out, "--out")
    if args.file:  # every --file is loaded (a missing, unreadable or broken file is refused) and honoured
        from ..claims.cli import collect, file_claim_ids

        claims = collect(args.file)
        mine = file_claim_ids(args.file)
        if args.claim in CLAIMS and args.claim not in mine:
            raise ValueError(
                f"--file {', '.join(args.file)}: defines no claim {args.claim!r} (a built-in claim; "
                f"the file(s) define: {', '.join(mine) or 'no Claim'}); drop --file or name one of its claims"
            )
    if args.claim not in CLAIMS or args.file:  # a Claim object (afltheory.claims): the generic adversary
        from ..claims.cli import collect

        claims = collect(args.file)
        if args.claim in claims:
            if args.seeds != 1 or args.jobs != 1 or args.executor != "local" or args.scheduler:
                raise ValueError(
                    "--seeds/--jobs/--executor/--scheduler apply to the built-in claims' search "
                    f"(afltheory adversary --list), not to the generic adversary of {args.claim!r}"
                )
            for flag, key, off in _BOX_ONLY:
                if getattr(args, key, off) not in (off, None, False, ()):
                    raise ValueError(
                        f"{flag} applies to the built-in claims' search (afltheory adversary --list), not to "
                        f"the generic adversary of {args.claim!r}"
                    )
            refuse_overlap([("--file", f) for f in args.file], [("--json", args.json)])
            return _run_generic(claims[args.claim], args)
    c = get_claim(args.claim)
    from .claims import THEOREMS

    scaling_on = (
        _scaling_seconds(args) > 0 and args.isolate is None and getattr(c, "theorem", None) in THEOREMS
    )
    if scaling_on:  # an impossible cap of the scaling search is refused before the box search runs
        from .scaling import Point, fit_limits

        fit_limits(Point(), *_scaling_limits(args))
    cls = c.default_class()
    sizes = {k[4:]: v for k, v in vars(args).items() if k.startswith("cls_") and v is not None}
    if sizes:
        if "rounds" in sizes and cls.min_rounds > sizes["rounds"]:
            sizes["min_rounds"] = sizes["rounds"]
        cls = cls.replace(**sizes)
    if args.min_gap is not None:
        cls = cls.replace(min_gap=args.min_gap)
    if args.hessian:
        cls = cls.replace(hessian=args.hessian)
    if args.rotate:
        cls = cls.replace(rotate=True)
    if args.arrivals:
        cls = cls.replace(arrivals=tuple(args.arrivals))
    if args.isolate:
        cls = cls.isolate(args.isolate)
    if args.scheduler and args.executor != "dask":
        raise ValueError(f"--scheduler {args.scheduler!r} needs --executor dask")
    journals = []
    if args.journal is not None:
        from .journal import check_journal_path

        journals = (
            [args.journal]
            if args.seeds == 1 and args.executor == "local"
            else [f"{args.journal}.seed{s}" for s in range(args.seed, args.seed + args.seeds)]
        )
        for j in journals:
            check_journal_path(j, "--journal")
    figures = [os.path.join(args.out or "", f"adversary_{c.id}_{k}.png") for k in ("progress", "worst")]
    refuse_overlap(
        [("--journal", j) for j in journals] + [("--file", f) for f in args.file],
        [("--json", args.json)] + [("--out", f) for f in figures if args.out],
    )
    progress = None
    if args.progress:
        step = max(1, args.budget // 20)
        mark = [0]

        def progress(n: int, best: float) -> None:
            if n >= mark[0] + step or n >= args.budget:
                mark[0] = n
                print(f"  {n}/{args.budget} evaluations, best ratio {best:.4g}", file=sys.stderr, flush=True)

    if args.seeds == 1 and args.executor == "local":
        wc = search(
            c,
            budget=args.budget,
            seed=args.seed,
            assumptions=cls,
            replicates=args.replicates,
            journal=args.journal,
            progress=progress,
            max_seconds=None if args.allow_large else 1800.0,
        )
    else:
        seeds = list(range(args.seed, args.seed + args.seeds))
        found = search_seeds(
            c.id,
            cls,
            seeds=seeds,
            budget=args.budget,
            replicates=args.replicates,
            executor=args.executor,
            jobs=args.jobs,
            scheduler=args.scheduler,
            journal=args.journal,
        )
        for s, w in zip(seeds, found, strict=True):
            print(f"  seed {s}: ratio {w.ratio:.4g} ({w.evaluations} evaluations, {w.elapsed:.1f} s)")
        wc = max(found, key=lambda w: w.ratio if w.ratio == w.ratio else -float("inf"))
        print(f"worst of {len(seeds)} searches: seed {wc.seed}")
    print(wc.summary())
    for note in wc.notes:
        print(f"  note: {note}")
    if wc.confirmation is not None:
        cf = wc.confirmation
        print(
            f"  Monte Carlo: mean LHS {cf['lhs_mean']:.4g} vs mean bound {cf['bound_mean']:.4g}; "
            f"99% lower bound on mean(LHS − bound) = {cf['diff_lcb']:.4g} -> "
            f"{'confirmed' if cf['confirmed'] else 'not confirmed'} ({cf.get('why', '')}); exact engine "
            "LHS " + ("n/a" if cf["exact_engine_lhs"] is None else f"{cf['exact_engine_lhs']:.4g}")
        )
    scaled = None
    if scaling_on:
        from .scaling import scale

        limits, names = _scaling_limits(args)
        scaled = scale(c, budget_seconds=_scaling_seconds(args), limits=limits, limit_names=names)
        print(scaled.summary())
    else:
        print("  coverage: the box above only (no scaling search: --scaling 0, --isolate, or a lemma)")
    if args.json:
        _write_result(args.json, wc, scaled)
    if args.out and wc.instance is not None:
        from .plots import progress_plot, worst_instance_plot

        os.makedirs(args.out, exist_ok=True)
        a = progress_plot(os.path.join(args.out, f"adversary_{c.id}_progress.png"), wc)
        b = worst_instance_plot(os.path.join(args.out, f"adversary_{c.id}_worst.png"), wc)
        print(f"  wrote {a}, {b}")
    return 0 if wc.instance is not None else 1  # 1: nothing could be measured (the summary says why)


def _write_result(path: str, wc, scaled) -> None:
    """``--json``: the box search's result, with the scaling search's under "scaling" when one ran (atomic,
    strict JSON)."""
    from .._io import jsonable, write_json

    out = wc.to_dict()
    if scaled is not None:
        out["scaling"] = scaled.to_dict()
    write_json(path, jsonable(out), indent=1)
    print(f"  wrote {path}")


#: (flag, attribute, its "not given" value): options of the built-in claims' box search only
_BOX_ONLY = (
    ("--isolate", "isolate", None),
    ("--min-gap", "min_gap", None),
    ("--hessian", "hessian", None),
    ("--rotate", "rotate", False),
    ("--arrivals", "arrivals", None),
    ("--journal", "journal", None),
    ("--out", "out", None),
)


def _check_scaling(args: argparse.Namespace) -> None:
    """``--scaling SECONDS``: a finite number in [0, 86400] (0: off), refused before any search."""
    import math

    s = getattr(args, "scaling", None)
    if s is not None and not (math.isfinite(s) and 0 <= s <= 86400):
        raise ValueError(f"--scaling={s}: must be a number of seconds in [0, 86400] (0: off)")


def _scaling_limits(args: argparse.Namespace) -> tuple[dict, dict]:
    """(limits, names): the size options given (--dim, --num-workers, --max-delay, --K-max, --rounds) as
    limits on the scaling points' fields (``scaling.LIMIT_OPTIONS``), and each field's flag for errors."""
    from .scaling import LIMIT_OPTIONS

    limits, names = {}, {}
    for key, (fname, flag) in LIMIT_OPTIONS.items():
        v = getattr(args, f"cls_{key}", None)
        if v is not None:
            limits[fname], names[fname] = v, flag
    return limits, names


def _scaling_seconds(args: argparse.Namespace) -> float:
    """The scaling search's budget: ``--scaling``, else 90 s with the default budget 2000 or more, else 0."""
    s = getattr(args, "scaling", None)
    return (90.0 if args.budget >= 2000 else 0.0) if s is None else float(s)


#: the box's size options (``cls_`` + name) and ``generic.search_claim``'s keyword for each
_GENERIC_SIZES = (
    ("dim", "max_dim"),
    ("num_workers", "max_workers"),
    ("max_delay", "max_delay"),
    ("K_max", "max_K"),
    ("rounds", "max_rounds"),
)


def _run_generic(claim, args: argparse.Namespace) -> int:
    """``afltheory adversary ID --file F.py``: the generic search over a ``Claim``'s class."""
    from .generic import search_claim

    sizes = {k[4:]: v for k, v in vars(args).items() if k.startswith("cls_") and v is not None}
    kw = {key: sizes[name] for name, key in _GENERIC_SIZES if name in sizes}
    from .generic import BOX_LOWS

    for name, key in _GENERIC_SIZES:  # one line naming the option, before any search
        low = BOX_LOWS[key]
        if name in sizes and sizes[name] < low:
            flag = "--" + name.replace("_", "-")
            raise ValueError(
                f"{flag}={sizes[name]}: the generic adversary's box search needs at least {low} (its "
                f"instances have M ≥ 2 workers and T ≥ 5 rounds); raise {flag}"
            )
    seconds = _scaling_seconds(args)
    if seconds > 0:  # an impossible cap of the scaling search is refused before the box search runs
        from .generic import ScalePoint
        from .scaling import fit_limits

        aclass = claim.assumption_class
        lows = {f: aclass.sizes[f].low for f in ("M", "T", "tau", "K", "d") if f in aclass.sizes}
        fit_limits(ScalePoint(), *_scaling_limits(args), lows)
    wc = search_claim(claim, budget=args.budget, seed=args.seed, replicates=args.replicates, **kw)
    print(wc.summary())
    if wc.confirmation is not None:
        cf = wc.confirmation
        print(
            f"  Monte Carlo ({cf['replicates']} runs): mean measured {cf['measured_mean']:.4g}, 99% lower "
            f"bound {cf['measured_lcb99']:.4g} vs bound {cf['bound']:.4g} -> "
            f"{'confirmed' if cf['confirmed'] else 'not confirmed'}"
        )
    scaled = None
    if seconds > 0:
        from .generic import scale_claim

        limits, names = _scaling_limits(args)
        scaled = scale_claim(
            claim,
            budget_seconds=seconds,
            seed=args.seed,
            replicates=args.replicates,
            limits=limits,
            limit_names=names,
        )
        print(scaled.summary())
    else:
        print("  coverage: the box above only (no scaling search: --scaling 0, or a budget below 2000)")
    if args.json:
        _write_result(args.json, wc, scaled)
    return 0
