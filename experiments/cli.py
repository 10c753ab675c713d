"""``afltheory real ...``: the paper's real-data experiments (drivers in ``experiments.real_data``).

    afltheory real table2   [--ps 1 2 5 10] [common options]
    afltheory real table3   [--ps ...] [--settings sync-const async-dyn]
    afltheory real figure5  [--ps ...]
    afltheory real wallclock [--p 1] [--target 0.85]
common: --rounds 150 --seeds 10 --m 5 --workers 10 --K 5 --eta 1.0 --eta-L 0.1 --batch 64 --max-delay 4
        --backend numpy|torch --model lr|cnn --dataset digits|mnist|cifar10 --data-dir DIR --out DIR
        --eval-every 1 --threads 1 --seed 0 --data-seed 0
"""

from __future__ import annotations

import argparse

__all__ = ["add_real_parser"]


def _common(p):
    g = p.add_argument_group("experiment settings")
    g.add_argument("--rounds", type=int, default=150)
    g.add_argument(
        "--seeds",
        type=int,
        default=10,
        help="independent replicates (schedules + minibatches)",
    )
    g.add_argument("--workers", type=int, default=10, help="M")
    g.add_argument("--m", type=int, default=5, help="arrivals per round")
    g.add_argument("--K", type=int, default=5, help="constant local steps (dynamic: U{1..2K})")
    g.add_argument("--eta", type=float, default=1.0)
    g.add_argument("--eta-L", type=float, default=0.1)
    g.add_argument("--batch", type=int, default=64)
    g.add_argument("--max-delay", type=int, default=4)
    g.add_argument("--backend", choices=("numpy", "torch"), default="numpy")
    g.add_argument("--model", choices=("lr", "cnn"), default="lr", help="cnn needs --backend torch")
    g.add_argument("--dataset", choices=("digits", "mnist", "cifar10"), default="digits")
    g.add_argument("--data-dir", default=None, help="directory with MNIST IDX / CIFAR-10 pickle files")
    g.add_argument("--eval-every", type=int, default=1)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--data-seed", type=int, default=0)
    g.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/torch threads (1 is fastest for these sizes)",
    )
    g.add_argument("--out", default="results/real", help="directory for JSON, Markdown and PNG outputs")


def _config(args):
    from .real_data import RealConfig

    return RealConfig(
        rounds=args.rounds,
        seeds=args.seeds,
        num_workers=args.workers,
        m=args.m,
        K=args.K,
        eta=args.eta,
        eta_L=args.eta_L,
        batch_size=args.batch,
        max_delay=args.max_delay,
        backend=args.backend,
        model=args.model,
        data_seed=args.data_seed,
        seed=args.seed,
        eval_every=args.eval_every,
        data_dir=args.data_dir,
        dataset=args.dataset,
    )


def _limit_threads(n):
    import contextlib

    stack = contextlib.ExitStack()
    try:
        from threadpoolctl import threadpool_limits

        stack.enter_context(threadpool_limits(n))
    except ImportError:  # pragma: no cover
        pass
    try:
        import torch

        torch.set_num_threads(n)
    except ImportError:
        pass
    return stack


def _run(args):
    import math
    import sys

    from afltheory._io import MAX_SEED, check_output_dir, check_ranges, path_arg

    big = 10**7
    check_ranges(
        args,
        {
            **{
                k: (1, big, "--" + k.replace("_", "-"))
                for k in ("rounds", "seeds", "workers", "m", "K", "batch")
            },
            "max_delay": (0, big, "--max-delay"),
            "eval_every": (1, big, "--eval-every"),
            "seed": (0, MAX_SEED, "--seed"),
            "data_seed": (0, MAX_SEED, "--data-seed"),
            "threads": (1, 4096, "--threads"),
            "p": (1, 10**4, "--p"),
            "ps": (1, 10**4, "--ps"),
        },
    )
    target = getattr(args, "target", None)
    if target is not None and not (math.isfinite(target) and 0 < target <= 1):
        raise ValueError(f"--target={target} must be a test accuracy in (0, 1]")
    if getattr(args, "data_dir", None) is not None:
        path_arg(args.data_dir, "--data-dir", reading=True)
    check_output_dir(args.out, "--out")  # before the (long) experiment: refused with one line (exit 2)
    try:
        from . import real_data as ex

        cfg = _config(args)
        if cfg.backend == "torch":
            import torch  # noqa: F401 - needed by the torch backend: missing -> SKIPPED below
        return _run_with(ex, cfg, args)
    except ImportError as exc:
        hint = _install_hint(exc)
        if hint is None:
            raise
        print(
            f"afltheory real {args.real_command}: SKIPPED (needs: {hint}; {type(exc).__name__}: {exc})",
            file=sys.stderr,
        )
        return 1


def _install_hint(exc: BaseException) -> str | None:
    """``pip install 'afltheory[data]'`` (scikit-learn) / ``[torch]`` when ``exc`` is an ImportError of an
    optional extra the experiments need; None otherwise."""
    e: BaseException | None = exc
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, ImportError):
            name = (e.name or "").split(".")[0]
            extra = {"sklearn": "data", "torch": "torch", "torchvision": "torch"}.get(name)
            if extra:
                return f"pip install 'afltheory[{extra}]'"
        e = e.__cause__ or e.__context__
    return None


def _run_with(ex, cfg, args):
    with _limit_threads(args.threads):
        if args.real_command == "table2":
            res = ex.table2(cfg, ps=tuple(args.ps), out=args.out)
        elif args.real_command == "table3":
            res = ex.table3(cfg, ps=tuple(args.ps), out=args.out, settings=tuple(args.settings))
        elif args.real_command == "figure5":
            res = ex.figure5(cfg, ps=tuple(args.ps), out=args.out)
        else:
            res = ex.wallclock(cfg, p=args.p, target=args.target, out=args.out)
    print(
        f"## {args.real_command} ({cfg.dataset}, {cfg.backend}/{cfg.model}, {cfg.seeds} seeds, "
        f"{cfg.rounds} rounds; test accuracy mean ± 95% CI)\n"
    )
    print(res["table"])
    if res.get("files"):
        print("\nwrote " + ", ".join(res["files"]))
    return 0


def add_real_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``real`` (table2/table3/figure5/wallclock) to an argparse subparsers object; sets ``func``."""
    p = subparsers.add_parser(
        "real",
        help="real-data experiments (Tables 2-3, Figure 5, wall clock)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="real_command", metavar="{table2,table3,figure5,wallclock}")
    sub.required = True
    for name, hlp in (
        ("table2", "AFA-CD accuracy: p x sync/async x constant/dynamic steps"),
        ("table3", "FedProx(0.1) and SCAFFOLD workers inside AFA-CD"),
        ("figure5", "uniform vs biased arrivals, AFA-CD vs AFA-CS"),
    ):
        s = sub.add_parser(name, help=hlp)
        s.add_argument("--ps", type=int, nargs="+", default=[1, 2, 5, 10], help="classes per worker")
        if name == "table3":
            s.add_argument(
                "--settings",
                nargs="+",
                default=["sync-const", "async-dyn"],
                choices=["sync-const", "sync-dyn", "async-const", "async-dyn"],
            )
        _common(s)
        s.set_defaults(func=_run)
    w = sub.add_parser("wallclock", help="Exp(1) stragglers: event-driven AFL vs synchronous FedAvg")
    w.add_argument("--p", type=int, default=1)
    w.add_argument("--target", type=float, default=0.85, help="test accuracy target")
    _common(w)
    w.set_defaults(func=_run)
    return p
