"""Claim 2: the N-writer spectrum of the fully-overlapping map.

Identical jobs (T = 1, d = 0.3, uncapped) launched so that all N first writes
overlap: job j first fires at tau_j = sum_{l<=j} a_l with a_l ~ 0.01 d. The map
a -> a' of the N - 1 intervals between consecutive write starts (a' from the
second firings) is linear there; its Jacobian (central differences) should be
diagonal with a_j -> a_j (N - j) f(j) / (j f(N - j)) (MODEL.md check 3): for fair
f the eigenvalues are (N - j)/j, for power(0.5) ((N - j)/j)^(1/2), determinant 1,
ceil(N/2) - 1 of them expanding.

    .venv/bin/python scripts/claim2_spectrum.py [--quick]
"""
from __future__ import annotations

import math

import numpy as np

import _common as C
import stormsim
from stormsim import plots

RULES = {"fair": "fair", "power(0.5)": ("power", 0.5)}
#: Central differences of an exactly linear map: step 1e-2 of intervals 3e-3 s,
#: firing times ~1.3 s rounded at ~2e-16 -> ~1e-11 per derivative.
TOL = 1e-8


def spectrum_rows(ns, rules, cap=math.inf, d=0.3, seed=0):
    """Per (rule, N): eigenvalue moduli, theory, residuals, determinant."""
    out = []
    for name, rule in rules.items():
        for n in ns:
            fleet = stormsim.Fleet.identical(n, T=1.0, d=d, throughput=rule, cap=cap)
            J, a, a_new = C.overlap_jacobian(fleet, rel_step=1e-2, seed=seed)
            theory = C.overlap_theory(fleet)
            mod = np.sort(np.abs(np.linalg.eigvals(J)))
            th_sorted = np.sort(theory)
            off = np.abs(J - np.diag(np.diag(J))).max() / np.abs(np.diag(J)).max()
            out.append(dict(rule=name, N=n, J=J, moduli=mod, theory=theory,
                            res=np.abs(mod / th_sorted - 1).max(),
                            diag_res=np.abs(np.diag(J) / theory - 1).max(),
                            offdiag=off, det=float(np.linalg.det(J)),
                            expanding=int(np.sum(mod > 1 + 1e-9)),
                            ratio=(n - np.arange(1, n)) / np.arange(1, n)))
    return out


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--nmax", type=int, default=None, help="largest N (from 3)")
    args = p.parse_args(argv)
    t0 = C.start(args)
    ns = range(3, (args.nmax or C.pick(args, 6, 12)) + 1)
    res = spectrum_rows(ns, RULES, seed=args.seed)

    rows = []
    for r in res:
        n = r["N"]
        rows.append([r["rule"], n, C.fmt(r["res"]), C.fmt(r["diag_res"]), C.fmt(r["offdiag"]),
                     C.fmt(r["det"] - 1.0), f"{r['expanding']} ({math.ceil(n / 2) - 1})"])
    # the full spectrum of the largest N, as a reference
    big = [r for r in res if r["N"] == max(ns)]
    spec_rows = []
    for j in range(1, max(ns)):
        spec_rows.append([j, C.fmt(big[0]["ratio"][j - 1], 4)]
                         + [f"{C.fmt(r['J'][j - 1, j - 1], 6)} / {C.fmt(r['theory'][j - 1], 6)}"
                            for r in big])

    series = {}
    for name, alpha in (("fair", 1.0), ("power(0.5)", 0.5)):
        sel = [r for r in res if r["rule"] == name]
        x = np.concatenate([np.sort(r["ratio"]) for r in sel])
        y = np.concatenate([r["moduli"] for r in sel])
        series[name] = (x, y, (lambda a: (lambda z: z ** a))(alpha))
    fig = plots.spectrum(series, title=f"Fully-overlapping map, N = {min(ns)}..{max(ns)}, "
                                       "T = 1 s, d = 0.3 s, uncapped")
    f1 = C.save(fig, args, "claim2_spectrum")

    worst = max(r["res"] for r in res)
    worst_det = max(abs(r["det"] - 1) for r in res)
    worst_off = max(r["offdiag"] for r in res)
    exp_ok = all(r["expanding"] == math.ceil(r["N"] / 2) - 1 for r in res)
    ok = worst < TOL and worst_det < TOL and worst_off < TOL and exp_ok
    definition = """
Identical jobs, T = 1 s, d = 0.3 s, uncapped. Launch: job j first fires at tau_j = sum_(l<=j)
a_l (theta_j = 1 - tau_j / T), a_0 = 0.006 s, a_l = 0.003 s (1 + 0.3 sin l) (unequal, so
that symmetry cannot hide an off-diagonal term): all N first writes overlap. a'_j =
difference of jobs j and j-1's second firings. Jacobian J = dA' dA^-1 from central
differences (each a_j moved by +-1 % of the smallest interval; the measured first-firing
intervals are used for dA). "Eigenvalue residual" = max_j | |lambda|_(j) / theory_(j) - 1 |
over the sorted moduli; "diagonal residual" = max_j |J_jj / theory_j - 1| with theory_j =
(N - j) f(j) / (j f(N - j)); "off-diagonal" = max |J_ij, i != j| / max |J_jj|; expanding =
number of |lambda| > 1 (theory ceil(N/2) - 1 in brackets)."""
    body = (C.md_table(["f", "N", "eigenvalue residual", "diagonal residual", "off-diagonal",
                        "det - 1", "expanding (theory)"], rows)
            + f"\n\nDiagonal of J against theory, N = {max(ns)}:\n\n"
            + C.md_table(["j", "(N-j)/j"] + [f"J_jj / theory, {r['rule']}" for r in big],
                         spec_rows))
    verdict = (("Reproduced. " if ok else "NOT reproduced (see the table). ")
               + f"For N = {min(ns)}..{max(ns)}, fair and power(0.5) f, the measured moduli match "
               f"(N - j) f(j) / (j f(N - j)) to {C.fmt(worst)} relative (central-difference "
               f"rounding; tolerance {TOL:g}), J is diagonal to {C.fmt(worst_off)}, |det J - 1| <= "
               f"{C.fmt(worst_det)}, and the number of expanding directions is ceil(N/2) - 1 "
               f"{'in every case' if exp_ok else 'NOT in every case'}.")
    rows = [("fully-overlapping map of N identical writers: diagonal, eigenvalues "
             "(N - j) f(j) / (j f(N - j)), det 1, ceil(N/2) - 1 expanding directions",
             f"N = {min(ns)}..{max(ns)}, fair and power(0.5) f: eigenvalues to {C.fmt(worst)} "
             f"relative, off-diagonal {C.fmt(worst_off)}, |det J - 1| <= {C.fmt(worst_det)}",
             "reproduced (exact theory, to rounding)" if ok else "NOT reproduced (see the table)")]
    C.append_results(args, "2", "N-writer spectrum of the fully-overlapping map", definition,
                     body, verdict, [f1], t0, seeds=f"seed {args.seed} (no randomness is drawn: "
                                                    "sigma = 0)", rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
