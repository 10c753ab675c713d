"""`afltheory pep CLAIM --m 3 --K 2 --T 5 --tau 1 [--json FILE]`: the bracket [lower, PEP upper] vs the
bound."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from .theorems import Bracket

__all__ = ["add_parser", "format_bracket"]


def format_bracket(b: Bracket) -> str:
    """The bracket as printable lines (lower bound, certified upper bound, the theorem's bound and its
    terms)."""
    c = b.config
    up = "n/a (solver status " + b.status + ": NOT certified)" if b.upper is None else f"{b.upper:.6g}"
    lines = [
        f"{b.claim}: M={c['M']} m={c['m']} K={c['K']} T={c['T']} tau={c['tau']} sigma_G={c['sigma_G']} "
        f"Delta={c['delta']} L={c['L']}  (sigma_L = 0; eta={b.eta:.6g}, eta_L={b.eta_L:.6g}; "
        f"{'inside' if b.inside_conditions else 'OUTSIDE'} the theorem's conditions)",
        f"  schedule: {b.search}; workers {b.schedule['workers']} delays {b.schedule['delays']}",
        f"  bracket of the worst (1/T) sum_t |grad f(x_t)|^2: [{b.lower:.6g}, {up}]  (lower: "
        f"{b.lower_method}; upper: PEP, Gram {b.gram_size}, {b.config['heterogeneity']} heterogeneity)",
        f"  theorem bound: {b.bound:.6g}  = " + " + ".join(f"{k} {v:.4g}" for k, v in b.terms.items() if v),
        f"  bound without transient (control): {b.control:.6g}",
    ]
    if b.upper is not None:
        verdict = "CERTIFIED on this schedule" if b.holds else "NOT certified (PEP upper > bound)"
        if b.holds and not b.inside_conditions:
            verdict = "bound holds on this schedule (but outside the theorem's conditions)"
        if b.lower > b.bound:
            verdict = (
                "REFUTED (a concrete instance exceeds the bound)"
                if b.inside_conditions
                else (
                    "bound FAILS here (a concrete instance exceeds it; outside the conditions, "
                    "so no refutation)"
                )
            )
        lines.append(
            f"  verdict: {verdict}; upper/bound = {b.upper / b.bound:.3g}, lower/bound = "
            f"{b.lower / b.bound:.3g}; control {'exceeded' if b.control_exceeded else 'NOT exceeded'}"
        )
    lines.append(f"  status {b.status}, {b.seconds:.1f} s")
    return "\n".join(lines)


#: a --search of more PEP solves than this is refused unless --allow-large (with the projection)
MAX_SOLVES = 20000
#: the least time one PEP solve takes (the smallest Gram matrices, this machine): the projection's floor
SECONDS_PER_SOLVE = 0.01


def search_solves(search: str, M: int, m: int, T: int, tau: int, beam: int) -> float:
    """The number of PEP solves ``--search`` will run (a float; ``inf`` past 1e308), counted without
    enumerating: round t offers C(M, m)·(min(t, τ)+1)^m (worker set, delays) choices (round 0: the first set
    fixed, no delay); exhaustive multiplies them, beam solves at most ``beam`` prefixes × each round's."""
    import math

    if m > M:
        return 0.0
    lcomb = (math.lgamma(M + 1) - math.lgamma(m + 1) - math.lgamma(M - m + 1)) / math.log(10)
    logs = [0.0] + [lcomb + m * math.log10(min(t, tau) + 1) for t in range(1, T)]
    if search == "exhaustive":
        total = sum(logs)
        return 10.0**total if total < 308 else math.inf
    return 1.0 + sum(beam * 10.0**lg if lg < 300 else math.inf for lg in logs[1:])


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``afltheory pep thm2|thm3|thm4 ...`` to an argparse subparsers object."""
    from ..sweep.executors import add_executor_arguments

    p = sub.add_parser("pep", help="PEP worst case (certified upper bound) vs a theorem's bound, sigma_L = 0")
    p.add_argument("claim", choices=["thm2", "thm3", "thm4"])
    p.add_argument("--m", type=int, default=3, help="arrivals per round")
    p.add_argument("--M", type=int, default=None, help="workers (default m + 1)")
    p.add_argument("--K", type=int, default=2, help="local steps")
    p.add_argument("--T", type=int, default=5, help="rounds")
    p.add_argument("--tau", type=int, default=1, help="maximum delay")
    p.add_argument("--sigma-G", type=float, default=0.1, dest="sigma_G")
    p.add_argument("--delta", type=float, default=1.0, help="f(x_0) - f_*")
    p.add_argument("--L", type=float, default=1.0)
    p.add_argument(
        "--search",
        choices=["beam", "exhaustive"],
        default=None,
        help="worst case over schedules of this size (default: the max-delay schedule)",
    )
    p.add_argument("--beam", type=int, default=2)
    p.add_argument(
        "--allow-large",
        action="store_true",
        help=f"run a --search of more than {MAX_SOLVES} PEP solves (refused otherwise, with the projection)",
    )
    p.add_argument("--heterogeneity", choices=["server", "all"], default="server")
    p.add_argument("--max-gram", type=int, default=None, dest="max_gram")
    p.add_argument(
        "--gamma",
        type=float,
        default=None,
        help="override the server step eta*eta_L (exploratory; says if outside the conditions)",
    )
    p.add_argument(
        "--schedule",
        choices=["default", "fixed"],
        default="default",
        dest="schedule_kind",
        help="default: cyclic (thm2/4) or uniform (thm3) arrival sets; fixed: the same m workers "
        "every round (interchangeable workers: solved by the symmetry-reduced PEP)",
    )
    p.add_argument("--json", metavar="FILE", help="write the bracket as JSON")
    add_executor_arguments(
        p,
        jobs_help="with --search: solve in this many processes",
        executor_help="with --search: local processes (default) or Dask (LocalCluster of --jobs workers, "
        "or --scheduler ADDR)",
    )
    p.add_argument(
        "--journal",
        metavar="FILE",
        default=None,
        help="with --search: record every solve in FILE (JSON lines); rerunning the same command with it "
        "resumes an interrupted search where it stopped",
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help="with --search: print solves done and the best value on stderr",
    )

    def run(args):
        from .._io import check_output_file, check_ranges, jsonable, refuse_overlap, write_json
        from .journal import check_journal_path
        from .theorems import bracket

        check_ranges(
            args,
            {
                **{k: (1, 10**4, f"--{k}") for k in ("m", "M", "K", "T", "beam")},
                "tau": (0, 10**4, "--tau"),
                "jobs": (1, 4096, "--jobs"),
            },
        )
        if args.scheduler and args.executor != "dask":
            raise ValueError(f"--scheduler {args.scheduler!r} needs --executor dask")
        if args.jobs < 1:
            raise ValueError(f"--jobs={args.jobs} must be >= 1")
        if args.json is not None:  # before the (long) solve: an unusable path (or "") must not cost the run
            check_output_file(args.json, "--json")
        if args.journal is not None:
            if not args.search:
                raise ValueError("--journal needs --search (only the schedule search is resumable)")
            check_journal_path(args.journal, "--journal")
        refuse_overlap([("--journal", args.journal)], [("--json", args.json)])
        if args.search and not args.allow_large:
            n = search_solves(
                args.search, args.M if args.M is not None else args.m + 1, args.m, args.T, args.tau, args.beam
            )
            if n > MAX_SOLVES:
                raise ValueError(
                    f"--search {args.search}: {n:.3g} PEP solves for m={args.m}, T={args.T}, tau={args.tau} "
                    f"(at >= {SECONDS_PER_SOLVE:g} s each: >= {n * SECONDS_PER_SOLVE:.3g} s); refused above "
                    f"{MAX_SOLVES} without --allow-large (lower --T/--tau/--m"
                    + (", or --search beam)" if args.search == "exhaustive" else ", or --beam)")
                )

        def progress(n, best):
            import sys

            print(f"  {n} solves, best certified value {best:.6g}", file=sys.stderr, flush=True)

        b = bracket(
            args.claim,
            m=args.m,
            M=args.M,
            K=args.K,
            T=args.T,
            tau=args.tau,
            sigma_G=args.sigma_G,
            delta=args.delta,
            L=args.L,
            search=args.search,
            beam=args.beam,
            heterogeneity=args.heterogeneity,
            max_gram=args.max_gram,
            gamma=args.gamma,
            executor=args.executor,
            jobs=args.jobs,
            scheduler=args.scheduler,
            schedule_kind=args.schedule_kind,
            journal=args.journal,
            progress=progress if args.progress else None,
        )
        print(format_bracket(b))
        if args.json:  # strict JSON: no NaN/Infinity tokens
            write_json(args.json, jsonable(b.to_json()), indent=2)
        return 0 if b.upper is not None else 1

    p.set_defaults(func=run)
    return p
