"""``afltheory check``: run the registered paper checks, print the verdict table, write the reports.

Exit code 0 iff every verdict passes and every negative control fails (and no check crashed).
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import time
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor

from afltheory.analysis import Verdict

from .registry import CHECKS, Context, load_all
from .report import print_table, write_html, write_markdown


def run_check(check_id: str, tier: str = "quick", seed: int = 0, out: str = "report") -> dict:
    """Run one check; returns {"spec", "verdicts" (list of Verdict dicts), "elapsed", "error", "doc"}."""
    load_all()
    spec = CHECKS[check_id]
    ctx = Context(tier=tier, seed=seed, out=out)
    t0 = time.perf_counter()
    err = None
    verdicts = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdicts = list(spec.func(ctx))
    except Exception:  # a crashing check is a failing verdict, never a silent skip
        err = traceback.format_exc()
        verdicts = [Verdict(check_id, f"check {check_id} crashed", spec.reference, None, None, None, "no crash",
                            False, notes=err.strip().splitlines()[-1])]
    doc = inspect.getdoc(sys.modules[spec.module]) or ""
    return {"spec": {"id": spec.id, "title": spec.title, "reference": spec.reference},
            "verdicts": [v.to_dict() for v in verdicts], "elapsed": time.perf_counter() - t0, "error": err,
            "doc": doc}


def _ordered():
    from .registry import MODULES
    rank = {m: j for j, m in enumerate(MODULES)}
    return sorted(CHECKS, key=lambda i: (rank.get(CHECKS[i].module.rsplit(".", 1)[-1], 99), i))


def _select(only):
    load_all()
    if not only:
        return _ordered()
    unknown = [i for i in only if i not in CHECKS]
    if unknown:
        raise ValueError(f"--only: unknown check id(s) {unknown}; known ids: {', '.join(CHECKS)}")
    return [i for i in _ordered() if i in set(only)]


def run_checks(ids, tier="quick", seed=0, out="report", jobs=1) -> list[dict]:
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    if jobs > 1 and len(ids) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            futs = [ex.submit(run_check, i, tier, seed, out) for i in ids]
            res = [f.result() for f in futs]
    else:
        res = [run_check(i, tier, seed, out) for i in ids]
    for r in res:
        r["verdicts"] = [Verdict.from_dict(d) for d in r["verdicts"]]
    return res


def main(args) -> int:
    load_all()
    if getattr(args, "list", False):
        for spec in CHECKS.values():
            print(f"{spec.id:16s} {spec.title}  [{spec.reference}]")
        return 0
    tier = args.tier or "quick"
    if args.jobs < 1:
        raise ValueError(f"--jobs={args.jobs} must be >= 1")
    if args.seed < 0:
        raise ValueError(f"--seed={args.seed} must be >= 0")
    ids = _select(args.only)
    out = args.out
    t0 = time.perf_counter()
    results = run_checks(ids, tier, args.seed, out, args.jobs)
    elapsed = time.perf_counter() - t0
    allv = [v for r in results for v in r["verdicts"]]
    meta = {"tier": tier, "seed": args.seed, "n_verdicts": len(allv), "n_ok": sum(v.ok for v in allv),
            "elapsed": elapsed}
    print_table(results)
    for r in results:
        print(f"  {r['spec']['id']:16s} {r['elapsed']:6.1f} s" + ("  CRASHED" if r["error"] else ""))
    md = write_markdown(os.path.join(out, "report.md"), results, meta)
    ht = write_html(os.path.join(out, "report.html"), out, results, meta)
    if args.json:
        d = os.path.dirname(os.path.abspath(args.json))
        os.makedirs(d, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump([v.to_dict() for v in allv], fh, indent=2)
    bad = [v for v in allv if not v.ok]
    crashed = [r["spec"]["id"] for r in results if r["error"]]
    print(f"\n{meta['n_ok']}/{len(allv)} verdicts pass ({elapsed:.1f} s); reports: {md}, {ht}")
    if bad:
        print("FAILED: " + ", ".join(v.id for v in bad))
    if crashed:
        print("CRASHED: " + ", ".join(crashed))
    return 0 if not bad and not crashed else 1
