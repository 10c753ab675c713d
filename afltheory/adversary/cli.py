"""``afltheory adversary CLAIM [--budget N] [--seed S] [--json FILE] [--out DIR]``: worst-case search."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``afltheory adversary CLAIM ...`` to an argparse subparsers object (without importing the claims:
    they pull in sympy, and every ``afltheory`` command builds this parser)."""
    p = sub.add_parser("adversary", help="search a claim's assumption class for its worst case (exact "
                                         "engine)",
                       description="Search the assumption class of CLAIM for the largest measured/bound "
                                   "ratio; a "
                                   "ratio > 1 is confirmed by Monte Carlo before it is called a violation.")
    p.add_argument("claim", metavar="CLAIM", help="claim id: thm2, thm3, thm4, cor1, cor2, cor3, lemma2, "
                                                  "drift or a registered one (an unknown id lists them)")
    p.add_argument("--budget", type=int, default=2000, help="exact evaluations (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="FILE", help="write the result (with the instance as explicit arrays)")
    p.add_argument("--out", metavar="DIR", help="write the two figures (search progress, worst instance) "
                                                "here")
    p.add_argument("--replicates", type=int, default=1000, help="Monte Carlo runs confirming a violation")
    p.add_argument("--min-gap", type=float, default=None,
                   help="f(x_0) − f* at least this fraction of the class's Delta (1: no start near x*)")
    p.add_argument("--isolate", choices=("transient", "sigma_L", "sigma_G"),
                   help="search the sub-class where only this group of terms is non-zero "
                        "(tightness per term)")
    p.add_argument("--hessian", choices=("shared", "per_worker"), default=None,
                   help="one Hessian for all workers (σ_G exact) or one per worker "
                        "(client drift; σ_G on a ball)")
    p.add_argument("--rotate", action="store_true", help="dense Hessians (searched rotations)")
    for flag, key in (("--dim", "dim"), ("--num-workers", "num_workers"), ("--m", "m"),
                      ("--max-delay", "max_delay"), ("--K-max", "K_max"), ("--rounds", "rounds")):
        p.add_argument(flag, dest=f"cls_{key}", type=int, default=None, metavar="N",
                       help=f"assumption class: {key} (default: the claim's class)")
    p.add_argument("--list", action="store_true", help="list the claims and exit")
    p.add_argument("--file", action="append", default=[], metavar="FILE.py",
                   help="a Python file defining Claim objects (afltheory.claims); CLAIM may then be one of "
                        "their ids, or any afltheory.claims.paper id: searched by the generic adversary "
                        "(afltheory.adversary.generic, exact engine, hypothesis-targeted)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The ``adversary`` subcommand: search the claim's worst case, print and write the result; exit
    status."""
    from .claims import CLAIMS, get_claim
    from .search import search

    if args.list:
        for k, c in CLAIMS.items():
            print(f"{k:8s} {c.title}  {c.reference}")
        return 0
    from .._io import check_output_dir, check_output_file, jsonable, write_json

    if args.json:   # before the search: an unusable path must not cost the run
        check_output_file(args.json, "--json")
    if args.out:
        check_output_dir(args.out, "--out")
    if args.claim not in CLAIMS:   # a Claim object (afltheory.claims): the generic adversary
        from ..claims.cli import collect

        claims = collect(args.file)
        if args.claim in claims:
            return _run_generic(claims[args.claim], args)
    c = get_claim(args.claim)
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
    if args.isolate:
        cls = cls.isolate(args.isolate)
    wc = search(c, budget=args.budget, seed=args.seed, assumptions=cls, replicates=args.replicates)
    print(wc.summary())
    for note in wc.notes:
        print(f"  note: {note}")
    if wc.confirmation is not None:
        cf = wc.confirmation
        print(f"  Monte Carlo: mean LHS {cf['lhs_mean']:.4g} vs mean bound {cf['bound_mean']:.4g}; "
              f"99% lower bound on mean(LHS − bound) = {cf['diff_lcb']:.4g} -> "
              f"{'confirmed' if cf['confirmed'] else 'not confirmed'} ({cf.get('why', '')}); exact engine "
              "LHS "
              + ("n/a" if cf["exact_engine_lhs"] is None else f"{cf['exact_engine_lhs']:.4g}"))
    if args.json:
        write_json(args.json, jsonable(wc.to_dict()), indent=1)
        print(f"  wrote {args.json}")
    if args.out and wc.instance is not None:
        from .plots import progress_plot, worst_instance_plot

        os.makedirs(args.out, exist_ok=True)
        a = progress_plot(os.path.join(args.out, f"adversary_{c.id}_progress.png"), wc)
        b = worst_instance_plot(os.path.join(args.out, f"adversary_{c.id}_worst.png"), wc)
        print(f"  wrote {a}, {b}")
    return 0 if wc.instance is not None else 1   # 1: nothing could be measured (the summary says why)


def _run_generic(claim, args: argparse.Namespace) -> int:
    """``afltheory adversary ID --file F.py``: the generic search over a ``Claim``'s class."""
    from .generic import search_claim

    sizes = {k[4:]: v for k, v in vars(args).items() if k.startswith("cls_") and v is not None}
    kw = {key: sizes[name] for name, key in (("dim", "max_dim"), ("num_workers", "max_workers"),
                                             ("max_delay", "max_delay"), ("K_max", "max_K"),
                                             ("rounds", "max_rounds")) if name in sizes}
    wc = search_claim(claim, budget=args.budget, seed=args.seed, replicates=args.replicates, **kw)
    print(wc.summary())
    if wc.confirmation is not None:
        cf = wc.confirmation
        print(f"  Monte Carlo ({cf['replicates']} runs): mean measured {cf['measured_mean']:.4g}, 99% lower "
              f"bound {cf['measured_lcb99']:.4g} vs bound {cf['bound']:.4g} -> "
              f"{'confirmed' if cf['confirmed'] else 'not confirmed'}")
    if args.json:
        from .._io import jsonable, write_json

        write_json(args.json, jsonable(wc.to_dict()), indent=1)   # atomic, strict JSON
        print(f"  wrote {args.json}")
    return 0
