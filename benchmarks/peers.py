"""The engine against its peers and the random-number floor, in one process run (issue 31).

    OPENBLAS_NUM_THREADS=1 python benchmarks/peers.py [--K 5 1] [--replicates 256] [--rounds 200]
                                                      [--repeat 3] [--json FILE]

Workload (issue 31's table): AFA-CD (η = 1, η_L = 0.05) on ``HeterogeneousQuadratic`` (d = 50, M = 100,
L = 1, μ = 0.1, σ_L = σ_G = 1, diagonal shared Hessian), UniformArrivals(m = 10), UniformDelay(τ ≤ 4),
ConstantSteps(K), T rounds, R replicates, recording ‖∇f(x_t)‖² every round. Every contender samples the same
schedule (``Behaviour.sample``, inside its timing) and records the same per-round statistic. Contenders:

- ``afltheory default``: ``afltheory.simulate`` (``fast="auto"``: here the fast path, each worker's K local
  steps collapsed into one exact Gaussian draw and, AFA-CD's step being linear in the updates, the round's
  m arrival noises into one draw of their sum, every round in one numba kernel — the ``fast`` extra; its
  compilation, ~1.5 s once per process, is done before the timing); every ratio below is relative to it
  (lower is faster).
- ``afltheory default without numba``: the same call with the kernel replaced by its numpy loop (what the
  default runs when numba is not installed; the same bits).
- ``afltheory fast=False``: the reference path (the same collapsed law, other draws, computed round by round
  in numpy; its bits are pinned by tools/engine_trace_hashes.py).
- ``afltheory steps collapsed``: ``simulate(collapse="steps")`` (one draw per arrival: the default path
  before issue 31).
- ``afltheory step by step``: ``simulate(collapse=False)`` (the generic path, K noise draws per update).
- ``plain per-replicate loop``: numpy over a round's workers, Python over replicates and local steps
  (``benchmarks/engine.py``'s ``plain_loop``), run on ``--loop-replicates`` replicates and scaled to R.
- ``hand-vectorized numpy, SFC64 (collapsed)``: the collapsed round written directly in numpy over (R, m, d),
  noise from ``Generator(SFC64)``.
- ``hand-vectorized, steps and arrivals collapsed, SFC64``: the same, with the mean of the m arrivals'
  noises drawn as one Gaussian (R, d) (exact for this linear-Gaussian model with a shared K).
- ``numba kernel, SFC64``: the collapsed round in one ``@njit`` kernel per round (normals drawn with SFC64
  into a buffer); skipped with a message when numba is not importable (``pip install numba``).
- ``JAX jit + vmap + lax.scan``: the same computation as the collapsed numba kernel (steps and arrivals
  collapsed, one (d,) normal per replicate and round, threefry), ``vmap`` over replicates, ``lax.scan`` over
  rounds, compiled for the timed shape before the timing; skipped with a message when jax is absent.
- ``floor SFC64`` / ``floor Philox``: drawing normals with ``standard_normal(out=buffer)`` and nothing else:
  R·m·d per round (one per arrival, the issue's floor), R·d (one per replicate: the default path's draws)
  and K·R·m·d (one per local step: the step-by-step path's draws).

Timings are the best of ``--repeat`` runs of this process's CPU time (``--clock wall`` for wall time; CPU
time is far less sensitive to other processes on a shared machine, and every contender here is
single-threaded, JAX possibly excepted); absolute times depend on the machine, the ratios in one run much
less. Every contender that returns its replicates is checked against the exact law
(``afltheory.exact.moments``): z of the second half's time-averaged mean ‖∇f‖² (flagged "DISAGREES" when
|z| > 5) and max_t |z_t|, so a fast but wrong peer is reported, not ranked. The last lines give the default
path's ratios to the collapsed numba kernel and to the R·d SFC64 floor (issue 41's targets: ≤ 1.0, ≤ 2.5).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import plain_loop  # noqa: E402

import afltheory as aft  # noqa: E402
from afltheory import algorithms as al  # noqa: E402
from afltheory import anarchy as an  # noqa: E402
from afltheory.problems import HeterogeneousQuadratic  # noqa: E402

D, M, m, TAU = 50, 100, 10, 4
ETA, ETA_L = 1.0, 0.05


def setup(K):
    """(problem, algorithm, behaviour) of the workload with K local steps."""
    p = HeterogeneousQuadratic(dim=D, num_workers=M, L=1.0, mu=0.1, sigma_L=1.0, sigma_G=1.0, seed=0)
    beh = an.Behaviour(an.UniformArrivals(m), an.UniformDelay(TAU), an.ConstantSteps(K))
    return p, al.AFACD(ETA, ETA_L), beh


CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}
clock = time.process_time


def best_of(fn, repeat):
    """(best time on ``clock``, last result) of ``repeat`` calls."""
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = clock()
        out = fn()
        best = min(best, clock() - t0)
    return best, out


def collapse_coefficients(p, K):
    """Per coordinate (diagonal Hessian ev): G = coef ⊙ (y_0 − c_i) + nstd ⊙ z, z ~ N(0, I) — the exact law
    of the mean of K local SGD gradients (``afltheory.problems.quadratic.local_sgd_k_step_law``, which the
    engine draws from; summed term by term here, as a peer would)."""
    ev = p.hessian[0]
    a = 1.0 - ETA_L * ev
    coef = (1.0 - a**K) / (ETA_L * K)
    nstd = p.noise.sigma_L / np.sqrt(D) * np.sqrt(sum(a ** (2 * j) for j in range(K))) / K
    return ev, coef, nstd


def vectorized(p, beh, K, R, T, seed, arrivals_collapsed=False):
    """The collapsed round in plain numpy over (R, m, d), SFC64 normals; returns ‖∇f(x_t)‖² (R, T + 1)."""
    s = beh.sample(T, R, M, seed=seed)
    ev, coef, nstd = collapse_coefficients(p, K)
    C, xs = p.centers, p.constants.x_star
    gen = np.random.Generator(np.random.SFC64(seed))
    H = TAU + 1
    hist = np.empty((H, R, D))
    hist[0] = p.default_x0()
    rr = np.arange(R)[:, None]
    rec = np.empty((R, T + 1))
    rec[:, 0] = np.sum((ev * (hist[0] - xs)) ** 2, axis=1)
    z = np.empty((R, D) if arrivals_collapsed else (R, m, D))
    nstd_m = nstd / np.sqrt(m)
    for t in range(T):
        W, Dl = s.workers[:, t], s.delays[:, t]
        y0 = hist[(t - Dl) % H, rr]  # (R, m, d): the stale models
        y0 -= C[W]
        if arrivals_collapsed:
            g = coef * y0.mean(axis=1)
            gen.standard_normal(out=z)
            g += nstd_m * z
        else:
            gen.standard_normal(out=z)
            y0 *= coef
            z *= nstd
            y0 += z
            g = y0.mean(axis=1)
        x = hist[t % H] - ETA * ETA_L * g
        hist[(t + 1) % H] = x
        rec[:, t + 1] = np.sum((ev * (x - xs)) ** 2, axis=1)
    return rec


def numba_runner():
    """A vectorized-in-one-kernel round (numba), or None with the reason when numba is absent."""
    try:
        import numba
    except ImportError:
        return None, "numba not importable (pip install numba, or the `fast` extra: pip install -e .[fast])"

    @numba.njit(cache=False, fastmath=False)
    def round_kernel(hist, t, W, Dl, C, coef, nstd, z, eta, ev, xs, rec):
        H = hist.shape[0]
        R, mm = W.shape
        d = hist.shape[2]
        for r in range(R):
            acc = np.zeros(d)
            for i in range(mm):
                slot = (t - Dl[r, i]) % H
                w = W[r, i]
                for j in range(d):
                    acc[j] += coef[j] * (hist[slot, r, j] - C[w, j]) + nstd[j] * z[r, i, j]
            nxt = (t + 1) % H
            cur = t % H
            s = 0.0
            for j in range(d):
                v = hist[cur, r, j] - eta * acc[j] / mm
                hist[nxt, r, j] = v
                gj = ev[j] * (v - xs[j])
                s += gj * gj
            rec[r, t + 1] = s

    @numba.njit(cache=False, fastmath=False)
    def collapsed_kernel(hist, W, Dl, C, coef, nstd_m, z, eta, ev, xs, rec):
        """All T rounds in one call: per round and replicate, the mean of the m arrivals' collapsed K-step
        gradients, noise one Gaussian (R, d) per round (std nstd/√m): the default path's computation."""
        H = hist.shape[0]
        R, T, mm = W.shape
        d = hist.shape[2]
        acc = np.empty(d)
        for t in range(T):
            cur, nxt = t % H, (t + 1) % H
            for r in range(R):
                for j in range(d):
                    acc[j] = 0.0
                for i in range(mm):
                    slot = (t - Dl[r, t, i]) % H
                    w = W[r, t, i]
                    for j in range(d):
                        acc[j] += hist[slot, r, j] - C[w, j]
                s = 0.0
                for j in range(d):
                    g = coef[j] * acc[j] / mm + nstd_m[j] * z[t, r, j]
                    v = hist[cur, r, j] - eta * g
                    hist[nxt, r, j] = v
                    gj = ev[j] * (v - xs[j])
                    s += gj * gj
                rec[r, t + 1] = s

    def prepare(p, beh, K, R, T, seed):
        s = beh.sample(T, R, M, seed=seed)
        ev, coef, nstd = collapse_coefficients(p, K)
        H = TAU + 1
        hist = np.empty((H, R, D))
        hist[0] = p.default_x0()
        rec = np.empty((R, T + 1))
        rec[:, 0] = np.sum((ev * (hist[0] - p.constants.x_star)) ** 2, axis=1)
        return s, ev, coef, nstd, hist, rec

    def run(p, beh, K, R, T, seed):
        s, ev, coef, nstd, hist, rec = prepare(p, beh, K, R, T, seed)
        gen = np.random.Generator(np.random.SFC64(seed))
        z = np.empty((R, m, D))
        W, Dl = np.ascontiguousarray(s.workers), np.ascontiguousarray(s.delays)
        for t in range(T):
            gen.standard_normal(out=z)
            round_kernel(
                hist, t, W[:, t], Dl[:, t], p.centers, coef, nstd, z, ETA * ETA_L, ev, p.constants.x_star, rec
            )
        return rec

    def run_collapsed(p, beh, K, R, T, seed):
        s, ev, coef, nstd, hist, rec = prepare(p, beh, K, R, T, seed)
        z = np.random.Generator(np.random.SFC64(seed)).standard_normal((T, R, D))  # R·d per round
        W, Dl = np.ascontiguousarray(s.workers), np.ascontiguousarray(s.delays)
        collapsed_kernel(
            hist, W, Dl, p.centers, coef, nstd / np.sqrt(m), z, ETA * ETA_L, ev, p.constants.x_star, rec
        )
        return rec

    return (run, run_collapsed), f"numba {numba.__version__}"


def jax_runner():
    """jit + vmap over replicates + lax.scan over rounds of the default path's computation (the mean of the m
    arrivals' collapsed K-step gradients, its noise one Gaussian (d,) per replicate and round, threefry), or
    None with the reason when jax is absent."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, "jax not importable (pip install jax jaxlib)"
    jax.config.update("jax_enable_x64", True)
    H = TAU + 1

    def one_replicate(hist0, key, W, Dl, C, coef, nstd_m, ev, xs):
        def step(carry, inp):
            hist, key = carry
            t, w, dl = inp
            key, sub = jax.random.split(key)
            y0 = hist[(t - dl) % H] - C[w]  # (m, d) the stale models
            g = coef * y0.mean(axis=0) + nstd_m * jax.random.normal(sub, (D,))
            x = hist[t % H] - ETA * ETA_L * g
            return (hist.at[(t + 1) % H].set(x), key), jnp.sum((ev * (x - xs)) ** 2)

        return jax.lax.scan(step, (hist0, key), (jnp.arange(W.shape[0]), W, Dl))[1]

    batched = jax.jit(jax.vmap(one_replicate, in_axes=(None, 0, 0, 0, None, None, None, None, None)))

    def run(p, beh, K, R, T, seed):
        s = beh.sample(T, R, M, seed=seed)
        ev, coef, nstd = collapse_coefficients(p, K)
        hist0 = jnp.broadcast_to(jnp.asarray(p.default_x0()), (H, D))
        keys = jax.random.split(jax.random.PRNGKey(seed), R)
        out = batched(
            hist0,
            keys,
            jnp.asarray(s.workers),
            jnp.asarray(s.delays),
            jnp.asarray(p.centers),
            jnp.asarray(coef),
            jnp.asarray(nstd / np.sqrt(m)),
            jnp.asarray(ev),
            jnp.asarray(p.constants.x_star),
        )
        out.block_until_ready()
        g0 = float(np.sum((ev * (p.default_x0() - p.constants.x_star)) ** 2))
        return np.concatenate([np.full((R, 1), g0), np.asarray(out)], axis=1)

    return run, f"jax {jax.__version__}"


def floor(bitgen, n, T):
    """Draw n normals per round, T rounds, into one buffer."""
    gen = np.random.Generator(bitgen)
    buf = np.empty(n)
    for _ in range(T):
        gen.standard_normal(out=buf)


def agrees(ref, rec):
    """z of the mean over replicates of the second half's time-averaged ‖∇f‖² of ``rec`` against ``ref``
    (both (R, T + 1); the same schedules, independent noise: the independent-samples SE is conservative)."""
    h = ref.shape[1] // 2
    a, b = ref[:, h:].mean(axis=1), rec[:, h:].mean(axis=1)
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return float((b.mean() - a.mean()) / se)


def _discard(_result):
    """None: a contender whose output is not compared (timed only)."""
    return None


def exact_z(exact, rec):
    """(z of the second half's time-averaged mean ‖∇f‖², max over t >= 1 of |z_t|) of the replicates ``rec``
    (R, T + 1) against the exact moments (T + 1,), in standard errors of the replicate mean."""
    R, h = rec.shape[0], rec.shape[1] // 2
    avg = rec[:, h:].mean(axis=1)
    z_avg = (avg.mean() - exact[h:].mean()) / (avg.std(ddof=1) / np.sqrt(R))
    z_t = (rec[:, 1:].mean(axis=0) - exact[1:]) / (rec[:, 1:].std(axis=0, ddof=1) / np.sqrt(R))
    return float(z_avg), float(np.max(np.abs(z_t)))


def measure(K, R, T, repeat, loop_reps):
    """Every contender on the K-step workload, interleaved: ``repeat`` passes, each running every contender
    once in turn; a contender's time is its min over the passes. Rows (name, seconds, note)."""
    p, algo, beh = setup(K)
    exact = aft.exact.moments(p, algo, beh, T).grad_norm_sq  # the law every contender must compute
    aft.simulate(p, algo, beh, rounds=2, replicates=2, seed=0, fast=True)  # compile the kernel (not timed)
    kernel = aft.engine._fast_kernel

    def numpy_loop():
        aft.engine._fast_kernel = lambda: None  # the default path as it runs without numba
        try:
            return sim().grad_norm_sq
        finally:
            aft.engine._fast_kernel = kernel

    sim = lambda **kw: aft.simulate(p, algo, beh, rounds=T, replicates=R, seed=1, **kw)  # noqa: E731
    sched = beh.sample(T, loop_reps, M, seed=1)
    # (label, what it draws per round, callable -> (R, T + 1) replicates or None, seconds scale)
    contenders = [
        ("afltheory default (fast path: collapsed law, one kernel)", "R·d", lambda: sim().grad_norm_sq, 1.0),
        ("afltheory default without numba (its numpy loop)", "R·d", numpy_loop, 1.0),
        ("afltheory fast=False (reference path)", "R·d", lambda: sim(fast=False).grad_norm_sq, 1.0),
        (
            'afltheory steps collapsed (collapse="steps")',
            "R·m·d",
            lambda: sim(collapse="steps").grad_norm_sq,
            1,
        ),
        ("afltheory step by step (collapse=False)", "K·R·m·d", lambda: sim(collapse=False).grad_norm_sq, 1.0),
        (
            f"plain per-replicate numpy loop ({loop_reps} replicates, time scaled to R)",
            "K·m·d per replicate",
            lambda: _discard(plain_loop(p, algo, sched, p.default_x0(), 0)),
            R / loop_reps,
        ),
        (
            "hand-vectorized numpy, SFC64, steps collapsed",
            "R·m·d",
            lambda: vectorized(p, beh, K, R, T, 2),
            1.0,
        ),
        (
            "hand-vectorized numpy, SFC64, steps and arrivals collapsed",
            "R·d",
            lambda: vectorized(p, beh, K, R, T, 2, arrivals_collapsed=True),
            1.0,
        ),
    ]
    skipped = []
    runs, info = numba_runner()
    if runs is None:
        skipped.append(("numba kernels (steps collapsed / steps and arrivals collapsed)", info))
    else:
        run, run_collapsed = runs
        t0 = clock()
        run(p, beh, K, 8, 3, 0), run_collapsed(p, beh, K, 8, 3, 0)  # compile (not timed)
        info += f"; compile {clock() - t0:.1f} s not counted"
        contenders += [
            ("numba kernel per round, SFC64, steps collapsed", "R·m·d", lambda: run(p, beh, K, R, T, 3), 1.0),
            (
                "numba kernel over all rounds, SFC64, steps and arrivals collapsed",
                "R·d",
                lambda: run_collapsed(p, beh, K, R, T, 3),
                1.0,
            ),
        ]
    jrun, jinfo = jax_runner()
    if jrun is None:
        skipped.append(("JAX jit + vmap + lax.scan, steps and arrivals collapsed, threefry", jinfo))
    else:
        t0 = clock()
        jrun(p, beh, K, R, T, 0)  # compile for the timed shape (not timed)
        jinfo += f"; compile {clock() - t0:.1f} s not counted"
        contenders.append(
            (
                "JAX jit + vmap + lax.scan, steps and arrivals collapsed, threefry",
                "R·d",
                lambda: jrun(p, beh, K, R, T, 3),
                1.0,
            )
        )
    for what, per_round in (("R·m·d", R * m * D), ("R·d", R * D), ("K·R·m·d", K * R * m * D)):
        for gname, bg in (("SFC64", np.random.SFC64), ("Philox", np.random.Philox)):
            contenders.append(
                (
                    f"floor: {what} normals per round ({per_round}), {gname}, nothing else",
                    what,
                    lambda bg=bg, n=per_round: floor(bg(0), n, T),
                    1.0,
                )
            )
    contenders.append(
        (
            "(schedule sampling alone, inside every contender)",
            "—",
            lambda: _discard(beh.sample(T, R, M, seed=1)),
            1,
        )
    )
    best = {c[0]: np.inf for c in contenders}
    last = {}
    for _ in range(repeat):  # interleaved: a change of load hits every contender alike
        for name, _draws, fn, _scale in contenders:
            t0 = clock()
            out = fn()
            best[name] = min(best[name], clock() - t0)
            if out is not None:
                last[name] = out
    rows = []
    for name, draws, _fn, scale in contenders:
        note = f"draws {draws}"
        if name in last:
            za, zm = exact_z(exact, last[name])
            flag = "" if abs(za) <= 5 else "  DISAGREES with the exact law"
            note += f"; z vs exact: time-average {za:+.1f}, max_t |z_t| {zm:.1f}{flag}"
        if name.startswith("numba"):
            note += f"; {info}"
        if name.startswith("JAX") and jrun is not None:
            note += f"; {jinfo}"
        rows.append((name, best[name] * scale, note))
    rows += [(name, None, f"skipped: {why}") for name, why in skipped]
    return rows, best[contenders[0][0]]


def main(argv=None):
    """Print the peers table for each K (ratios to afltheory's default path); optionally write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--K", type=int, nargs="+", default=[5, 1])
    ap.add_argument("--replicates", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument(
        "--repeat", type=int, default=7, help="interleaved passes; each contender's min (default 7)"
    )
    ap.add_argument("--loop-replicates", type=int, default=4)
    ap.add_argument("--json", help="write the rows as JSON")
    ap.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time each contender by this process's CPU time (default: robust to other load on "
        "the machine; every contender here is single-threaded except possibly JAX) or wall",
    )
    args = ap.parse_args(argv)
    global clock
    clock = CLOCK[args.clock]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"AFA-CD, d = {D}, M = {M}, m = {m}, τ ≤ {TAU}, T = {args.rounds}, R = {args.replicates}; load "
        f"average at start {load:.1f} on {os.cpu_count()} cores; best of {args.repeat}, {args.clock} time"
    )
    out, summary = {}, {}
    for K in args.K:
        rows, t_def = measure(K, args.replicates, args.rounds, args.repeat, args.loop_replicates)
        print(f"\nK = {K}: afltheory default {t_def:.3f} s ({args.clock})")
        print(f"{'contender':66s} {'seconds':>8s} {'ratio':>6s}  note")
        for name, t, note in rows:
            ts, rs = ("—", "—") if t is None else (f"{t:.3f}", f"{t / t_def:.2f}")
            print(f"{name:66s} {ts:>8s} {rs:>6s}  {note}")
        times = {n: t for n, t, _ in rows if t is not None}
        kern = times.get("numba kernel over all rounds, SFC64, steps and arrivals collapsed")
        flo = times[f"floor: R·d normals per round ({args.replicates * D}), SFC64, nothing else"]
        print(
            f"K = {K} summary: default / collapsed numba kernel = "
            + ("— (numba absent)" if kern is None else f"{t_def / kern:.2f}")
            + f"; default / R·d SFC64 floor = {t_def / flo:.2f}"
        )
        summary[K] = t_def
        out[f"K={K}"] = [
            dict(contender=n, seconds=t, ratio=None if t is None else t / t_def, note=s) for n, t, s in rows
        ]
    if 5 in summary and 1 in summary:
        print(f"default path: time(K = 1) / time(K = 5) = {summary[1] / summary[5]:.2f}")
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average at end {load_end:.1f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(dict(load_start=load, load_end=load_end, clock=args.clock, rows=out), indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
