"""Splitting on the general dynamics against plain Monte Carlo (issue 38 item 2).

``python -m benchmarks.splitting_general [--n 16] [--fleets 1500] [--replicates 16]
[--trials 100] [--json PATH] [--only NAME,...]``

Cells: N identical jobs, L = 0.6, sigma = 0.01 T, fair, uncapped, random
launch, each with one option of the general dynamics (MODEL.md):

- ``async-block``, ``async-skip``: asynchronous checkpoints, snapshot
  0.01 T, slowdown eps = 0.2, on_busy "block" / "skip" (E1);
- ``weights``: blocking jobs of weights 1 and 4 alternating (E2);
- ``cap``: blocking jobs behind a writer cap K = N / 2 (E5);
- ``mixed-block``, ``mixed-skip``: N / 4 of the jobs fast (T = 0.1, d =
  0.015 at N = 16, scaled by 16 / N), async as above: a fast job's persist
  outlasts its compute interval once ~10 write at once, so the on_busy rule
  acts in the tail (at L = 0.6 no persist of the identical cells outlasts
  its interval: their two rules give the same fleets).

Per cell and level k: P(n_w >= k) and the storm rate nu_k from plain Monte
Carlo (``simulate``, fleets x 800 cycles after 80, stormsim.stats' delta-method
standard errors) and from ``storm_split`` (its standard error over
replicates), and z = (split - plain) / sqrt(se_split^2 + se_plain^2) at the
levels plain Monte Carlo resolves (relative error <= RESOLVED_RE, every
level it saw at least MIN_HITS fleets reach). The test of agreement: |z| <=
Z_AGREE at every such level, for both figures.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

import stormsim
from stormsim.risk.splitting import storm_split
from stormsim.stats.storms import storm_estimate
from stormsim.stats.tails import tail_estimate

#: |z| allowed: 4 combined standard errors. Each cell compares ~10 correlated
#: figures; under normality 4 se leave a false alarm of ~6e-5 each, and
#: splitting's replicate estimates are heavier-tailed than normal (their se
#: itself is noisy with 16 replicates), which 3 se did not allow for.
Z_AGREE = 4.0
#: A level plain Monte Carlo resolves: relative standard error at most this.
RESOLVED_RE = 0.3
MIN_HITS = 10


def cells(n: int) -> dict:
    """The four cells of the module docstring."""
    base = dict(T=[1.0] * n, d=[0.6 / n] * n, jitter=0.01)
    asyn = dict(checkpoint="async", snapshot=0.01, slowdown=0.2)
    return {
        "async-block": stormsim.Fleet(**base, **asyn, on_busy="block"),
        "async-skip": stormsim.Fleet(**base, **asyn, on_busy="skip"),
        "weights": stormsim.Fleet(**base, weights=[1.0, 4.0] * (n // 2)),
        "cap": stormsim.Fleet(**base, max_writers=n // 2),
        "mixed-block": mixed(n, "block"),
        "mixed-skip": mixed(n, "skip"),
    }


def mixed(n: int, rule: str):
    """The "mixed" cell: n / 4 fast async jobs among slow ones (module docstring)."""
    q = n // 4
    T = np.array([0.1] * q + [1.0] * (n - q))
    d = np.array([0.015 * 16 / n] * q + [0.6 / n] * (n - q))
    return stormsim.Fleet(T=T, d=d, jitter=0.01 * T, checkpoint="async", snapshot=0.01 * T,
                          slowdown=0.2, on_busy=rule)


def levels(n: int, fleet) -> list[int]:
    """The levels compared: spread up to where plain Monte Carlo stops."""
    if np.ptp(fleet.T) > 0:
        ks = {16: [4, 6, 8, 9]}.get(n, [4, 8, 11, 13])
    else:
        ks = {8: [3, 4, 5, 6, 7], 16: [3, 5, 7, 8, 10]}.get(n, [4, 7, 10, 12, 14])
    return [k for k in ks if k <= fleet.max_writers]


def compare(fleet, ks, fleets, replicates, trials, seed_plain=11, seed_split=2, flux_cycles=2000):
    c0 = time.process_time()
    run = stormsim.simulate(fleet, fleets=fleets, cycles=800, burn_in=80, seed=seed_plain)
    cpu_plain = time.process_time() - c0
    te = tail_estimate(run.occupancy)
    st = storm_estimate(run.upcrossings, run.occupancy)
    hits = (run.occupancy[:, ::-1].cumsum(axis=1)[:, ::-1] > 0).sum(axis=0)
    c0 = time.process_time()
    s = storm_split(fleet, ks, trials=trials, replicates=replicates, flux_cycles=flux_cycles,
                    burn_in=100, seed=seed_split)
    cpu_split = time.process_time() - c0
    rows = []
    for j, k in enumerate(ks):
        se_pp = (te.p_ge_hi[k] - te.p_ge_lo[k]) / 4
        se_rp = st.storms_per_s[k] * st.storms_per_s_rel_error[k]
        se_ps = s.p_ge[j] * s.p_ge_rel_error[j]
        se_rs = s.storms_per_s[j] * s.storms_per_s_rel_error[j]
        zp = (s.p_ge[j] - te.p_ge[k]) / np.hypot(se_ps, se_pp)
        zr = (s.storms_per_s[j] - st.storms_per_s[k]) / np.hypot(se_rs, se_rp)
        resolved = bool(hits[k] >= MIN_HITS and te.p_ge[k] > 0 and se_pp / te.p_ge[k] <= RESOLVED_RE
                        and st.storms_per_s_rel_error[k] <= RESOLVED_RE)
        rows.append(dict(k=k, p_plain=float(te.p_ge[k]), se_p_plain=float(se_pp),
                         p_split=float(s.p_ge[j]), se_p_split=float(se_ps), z_p=float(zp),
                         nu_plain=float(st.storms_per_s[k]), se_nu_plain=float(se_rp),
                         nu_split=float(s.storms_per_s[j]), se_nu_split=float(se_rs),
                         z_nu=float(zr), resolved=resolved, from_flux=bool(s.from_flux[j])))
    ok = all(abs(r["z_p"]) <= Z_AGREE and abs(r["z_nu"]) <= Z_AGREE for r in rows if r["resolved"])
    return dict(rows=rows, agree=ok, interfaces=s.interfaces.tolist(), truncated=s.truncated,
                cpu_plain=cpu_plain, cpu_split=cpu_split)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--fleets", type=int, default=1500)
    ap.add_argument("--replicates", type=int, default=16)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out = {}
    for name, fleet in cells(a.n).items():
        if a.only and name not in a.only.split(","):
            continue
        r = compare(fleet, levels(a.n, fleet), a.fleets, a.replicates, a.trials)
        out[name] = r
        print(f"{name}: N = {a.n}, interfaces {r['interfaces']}, agree {r['agree']}, "
              f"CPU plain {r['cpu_plain']:.1f} s, split {r['cpu_split']:.1f} s, "
              f"truncated {r['truncated']}", flush=True)
        for x in r["rows"]:
            print(f"  k={x['k']:2d} P plain {x['p_plain']:.3e} +- {x['se_p_plain']:.1e}  "
                  f"split {x['p_split']:.3e} +- {x['se_p_split']:.1e}  z {x['z_p']:+.2f} | "
                  f"nu plain {x['nu_plain']:.3e} split {x['nu_split']:.3e} z {x['z_nu']:+.2f}"
                  f"{'' if x['resolved'] else '  (not resolved by plain)'}"
                  f"{'  (flux run)' if x['from_flux'] else ''}", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
