"""Where forward flux sampling's variance comes from (docs/SPLITTING.md).

``python -m benchmarks.splitting_study effort --basin 10 --trials 400 --replicates 16 --seed 3``
    one ``storm_split`` at N = 32 (L = 0.6, sigma = 0.01 T, fair) for k = 20,
    22, 23, 24, 25: P, its RE over replicates, RE^2 x CPU s, the largest
    replicate's share, and at k = 25 the top five replicates and the median
    (a heavy tail shows as a median far below the mean). ``--basin`` is a
    level or a rule ("raised", "most-entries").
``python -m benchmarks.splitting_study validate --n 32 --replicates 64 --seed 2``
    ``storm_split`` with its defaults (the basin rule "raised") at every level
    of RESULTS.md's E3s table for that N, against the table's brute-force
    P(n_w >= k) and nu_k (their 95 % intervals read back as se = width /
    3.92): z per level, and the worst |z| (agreement: <= 3, as in E3s).
``python -m benchmarks.splitting_study committor --top 25 --replicates 24 --seed 11``
    the states that reach interface top - 1 (S >= top - 1) in one pass of
    the stages from L_0 = 10, then ``--probes`` trials from each of up to 120
    of them to top: their success fractions (an estimate of each state's
    committor), against the binomial spread one common fraction would give.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

import stormsim
from stormsim.engine import _kernel
from stormsim.engine.door import root_key
from stormsim.risk.splitting import _flux, _kernel_args, storm_split

LEVELS = (20, 22, 23, 24, 25)


def _fleet():
    return stormsim.Fleet.identical(32, load=0.6, jitter=0.01)


def effort(a) -> None:
    basin = int(a.basin) if a.basin.isdigit() else a.basin
    s = storm_split(_fleet(), list(LEVELS), trials=a.trials, replicates=a.replicates,
                    seed=a.seed, basin=basin, flux_cycles=a.flux_cycles)
    print(f"basin {s.interfaces[0]} ({a.basin}), {a.trials} clones x {a.replicates} replicates, "
          f"flux {a.flux_cycles} cycles, seed {a.seed}: {s.cpu_seconds:.1f} CPU s, "
          f"{s.entries.mean():.0f} entries per flux run")
    for j, k in enumerate(LEVELS):
        print(f"  k = {k}: P = {s.p_ge[j]:.3e}  RE {s.p_ge_rel_error[j]:.3f}  RE^2 x CPU "
              f"{s.p_ge_rel_error[j] ** 2 * s.cpu_seconds:.2f} s  top share {s.top_share[j]:.2f}")
    rp = np.sort(s.rep_p_ge[:, -1])[::-1]
    print(f"  k = 25 replicates (x 1e-12): top five {np.round(rp[:5] * 1e12, 2).tolist()}, "
          f"median {np.median(rp) * 1e12:.2f}, mean {rp.mean() * 1e12:.2f}")


def _brute_force(n):
    """RESULTS.md E3s rows for N = n: k -> ((P, se), (nu, se)) of brute force."""
    text = (Path(__file__).resolve().parents[1] / "RESULTS.md").read_text()
    text = text[text.index("## Claim E3s"):]
    num = r"([0-9.e+-]+) \[([0-9.e+-]+), ([0-9.e+-]+)\]"
    out = {}
    for m in re.finditer(rf"^\| {n} \| (\d+) \| {num} \| [^|]+\| [^|]+\| {num} \|",
                         text, re.M):
        g = [float(x) for x in m.groups()[1:]]
        out[int(m.group(1))] = ((g[0], (g[2] - g[1]) / 3.92), (g[3], (g[5] - g[4]) / 3.92))
    if not out:
        raise SystemExit(f"RESULTS.md has no E3s brute-force rows for N = {n}")
    return out


def validate(a) -> None:
    bf = _brute_force(a.n)
    ks = sorted(bf)
    s = storm_split(stormsim.Fleet.identical(a.n, load=0.6, jitter=0.01), ks,
                    replicates=a.replicates, seed=a.seed)
    print(f"N = {a.n}: storm_split defaults (basin {s.interfaces[0]}), {s.trials} clones x "
          f"{s.replicates} replicates, {s.cpu_seconds:.0f} CPU s, against E3s brute force")
    worst = 0.0
    for j, k in enumerate(ks):
        (p, sp), (nu, snu) = bf[k]
        zp = (s.p_ge[j] - p) / np.hypot(sp, s.p_ge[j] * s.p_ge_rel_error[j])
        zn = (s.storms_per_s[j] - nu) / np.hypot(snu, s.storms_per_s[j] * s.storms_per_s_rel_error[j])
        worst = max(worst, abs(zp), abs(zn))
        print(f"  k = {k:2d}: P {s.p_ge[j]:.3e} (brute force {p:.3e}) z {zp:+.2f}   "
              f"nu {s.storms_per_s[j]:.3e} ({nu:.3e}) z {zn:+.2f}")
    print(f"worst |z| = {worst:.2f} over {len(ks)} levels ({'agrees' if worst <= 3 else 'DIFFERS'}"
          " at 3 se)")


def _stage(args, bank, L0, hi, stage, R, M, n, key0, key1, horizon):
    rem, ph, cnt, bank_n = bank
    out = dict(occ=np.zeros((R, M, n + 1)), up=np.zeros((R, M, n + 1), dtype=np.int64),
               rem=np.zeros((R, M, n)), ph=np.zeros((R, M, n), dtype=np.int8),
               cnt=np.zeros((R, M, n), dtype=np.int64), st=np.zeros((R, M), dtype=np.int64),
               ev=np.zeros((R, M), dtype=np.int64))
    lo = np.concatenate([[0], np.cumsum(bank_n)[:-1]]).astype(np.int64)
    _kernel.ffs_stage(*args, rem, ph, cnt, lo, bank_n, key0, key1, np.int64(stage), np.int64(0),
                      np.int64(L0), np.int64(hi), np.int64(_kernel.FFS_MAX_EVENTS), out["occ"],
                      out["up"], out["rem"], out["ph"], out["cnt"], out["st"], out["ev"],
                      np.int64(horizon), False, np.int64(0), np.full(rem.shape[0], np.inf),
                      np.zeros((R, M)))
    return out


def committor(a) -> None:
    fleet, L0, R, M, n, H = _fleet(), 10, a.replicates, 100, 32, 2
    key0, key1 = root_key(a.seed)
    args = _kernel_args(fleet)
    *_, res_rem, res_ph, res_cnt, entries, _, _ = _flux(fleet, key0, key1, 0, R, L0, 100, 2000,
                                                        4096, "random", H)
    kept = np.minimum(entries, 4096)
    bank = (np.concatenate([res_rem[r, :kept[r]] for r in range(R)]),
            np.concatenate([res_ph[r, :kept[r]] for r in range(R)]),
            np.concatenate([res_cnt[r, :kept[r]] for r in range(R)]), kept.astype(np.int64))
    for j, hi in enumerate(range(L0 + 1, a.top)):
        o = _stage(args, bank, L0, hi, j, R, M, n, key0, key1, H)
        ok = o["st"] == 1
        bank = (np.ascontiguousarray(o["rem"][ok]), np.ascontiguousarray(o["ph"][ok]),
                np.ascontiguousarray(o["cnt"][ok]), ok.sum(axis=1).astype(np.int64))
        print(f"  stage to {hi}: success fraction {ok.mean():.3f}, {int(ok.sum())} states")
    K = min(120, bank[0].shape[0])
    pick = np.random.default_rng(a.seed).choice(bank[0].shape[0], K, replace=False)
    probe = (bank[0][pick].copy(), bank[1][pick].copy(), bank[2][pick].copy(),
             np.ones(K, dtype=np.int64))
    o = _stage(args, probe, L0, a.top, 999, K, a.probes, n, key0, key1, H)
    q = (o["st"] == 1).mean(axis=1)
    binom = np.sqrt(q.mean() * (1 - q.mean()) / a.probes)
    print(f"{K} states at S >= {a.top - 1}, {a.probes} trials each to {a.top}: success "
          f"fraction mean {q.mean():.3f}, sd {q.std():.3f} ({q.std() / binom:.1f}x the binomial "
          f"{binom:.3f}); quantiles 0/10/25/50/75/90/100 %: "
          f"{np.round(np.quantile(q, [0, .1, .25, .5, .75, .9, 1]), 3).tolist()}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    e = sub.add_parser("effort")
    e.add_argument("--basin", default="raised")
    e.add_argument("--trials", type=int, default=100)
    e.add_argument("--replicates", type=int, default=32)
    e.add_argument("--flux-cycles", type=int, default=2000)
    e.add_argument("--seed", type=int, default=1)
    e.set_defaults(func=effort)
    v = sub.add_parser("validate")
    v.add_argument("--n", type=int, default=32)
    v.add_argument("--replicates", type=int, default=64)
    v.add_argument("--seed", type=int, default=2)
    v.set_defaults(func=validate)
    c = sub.add_parser("committor")
    c.add_argument("--top", type=int, default=25)
    c.add_argument("--replicates", type=int, default=24)
    c.add_argument("--probes", type=int, default=100)
    c.add_argument("--seed", type=int, default=11)
    c.set_defaults(func=committor)
    a = ap.parse_args(argv)
    a.func(a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
