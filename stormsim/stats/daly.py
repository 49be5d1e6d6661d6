"""Daly's law: goodput and the best checkpoint interval without contention (MODEL.md E8, F2).

A job computes T seconds, writes its checkpoint in d seconds, and fails as a
Poisson process of mean time between failures M (seconds of wall time, in
every phase, the restart included); a failure loses the work since the last
completed write and costs a restart of R seconds before the job computes
again. Daly (2006, "A higher order estimate of the optimum checkpoint
interval for restart dumps", Future Generation Computer Systems 22(3),
303-312) gives its expected wall time per committed interval exactly,

    E(T) = M e^{R/M} (e^{(T + d)/M} - 1),

so its long-run goodput is T / E(T). Its maximiser does not depend on R (R
only scales E): it is the root of e^{(T + d)/M} (T/M - 1) + 1 = 0, i.e.
T* = M (1 + W_0(-e^{-1 - d/M})), W_0 the principal Lambert function.

- ``young_interval``: Young's (1974) first-order optimum sqrt(2 d M);
- ``daly_interval_approx``: Daly's higher-order estimate
  sqrt(2 d M) [1 + sqrt(d / 2M) / 3 + (d / 2M) / 9] - d (d < 2M; else M);
- ``daly_optimum``: the exact maximiser, solved numerically (scipy's brentq
  on the stationarity condition, to a few ulp);
- ``daly_breakdown``: where the wall time goes (goodput, writing, lost work,
  down time: E8's parts without contention).

Daly's published cases (T_s = 500 h, R = 10 min, d = 5 min): at M = 24 h,
6 h and 15 min the exact optimum is 116.69, 56.71 and 9.17 min (116.7, 56.7,
9.2); his higher-order estimate gives 116.69, 56.71 and 9.14 min (his
figures 3-5 print 117, 57 and 9.1 min). M = inf (never fails) is allowed:
E = T + d, and the best interval is inf.
"""
from __future__ import annotations

import math
from numbers import Real

from .._args import check_real

__all__ = ["daly_breakdown", "daly_expected_time", "daly_goodput", "daly_interval_approx",
           "daly_optimum", "young_interval"]


def _positive(name: str, value, allow_inf: bool = False) -> float:
    """Seconds > 0 and finite (or inf, never fails, where ``allow_inf``)."""
    if allow_inf and isinstance(value, Real) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    return check_real(name, value, 0.0, open_lo=True,
                      what="seconds" + ("; inf: never fails" if allow_inf else ""))


def _restart(value) -> float:
    return check_real("restart", value, 0.0, what="seconds")


def young_interval(d, mtbf) -> float:
    """Young's first-order optimum interval sqrt(2 d M) (seconds)."""
    d, M = _positive("d", d), _positive("mtbf", mtbf, allow_inf=True)
    return math.sqrt(2.0 * d * M)


def daly_expected_time(T, d, mtbf, restart) -> float:
    """Expected wall time per committed interval, M e^{R/M} (e^{(T + d)/M} - 1) (seconds)."""
    T, d = _positive("T", T), _positive("d", d)
    M, R = _positive("mtbf", mtbf, allow_inf=True), _restart(restart)
    if math.isinf(M):
        return T + d
    return M * math.exp(R / M) * math.expm1((T + d) / M)


def daly_goodput(T, d, mtbf, restart) -> float:
    """Long-run goodput T / E (the fraction of wall time that becomes committed work)."""
    return float(T) / daly_expected_time(T, d, mtbf, restart)


def daly_breakdown(T, d, mtbf, restart) -> dict:
    """Where the wall time goes, as fractions of E (they add up to 1): goodput
    T/E and the parts of MODEL.md E8 without contention or cap.

    Per committed interval, attempts of T + d are iid and each succeeds with
    probability p = e^{-(T + d)/M}: e^{(T + d)/M} - 1 failed attempts on
    average, each followed by a DOWN episode of M (e^{R/M} - 1) (DOWN ends
    R after its last failure). A failed attempt loses its compute,
    E[min(X, T) | X < T + d] with X exponential of mean M, so

    - lost  = M (e^{(T + d)/M} - e^{d/M}) - T,
    - down  = M (e^{R/M} - 1) (e^{(T + d)/M} - 1),
    - writing = E - T - lost - down (the write that commits, d, and the
      abandoned parts of failed writes: M (e^{(T + d)/M} - 1) - T - lost in all).
    """
    E = daly_expected_time(T, d, mtbf, restart)
    M, R = float(mtbf), float(restart)
    if math.isinf(M):
        lost = down = 0.0
    else:
        lost = M * (math.exp((T + d) / M) - math.exp(d / M)) - T
        down = M * math.expm1(R / M) * math.expm1((T + d) / M)
    return {"goodput": T / E, "writing": (E - T - lost - down) / E, "lost": lost / E,
            "down": down / E}


def daly_optimum(d, mtbf, restart=0.0) -> float:
    """The interval T maximising ``daly_goodput`` exactly (seconds; inf if M = inf).

    The root in (0, M) of h(x) = e^{x + a} (x - 1) + 1, x = T/M, a = d/M,
    written expm1(x + a) (x - 1) + x (no cancellation of the leading 1s):
    h(0) = -expm1(a) < 0 and h(1) = 1 > 0, h increasing on (0, 1). R does not
    move the optimum (it scales E); it is checked and otherwise unused.
    """
    from scipy.optimize import brentq

    d, M = _positive("d", d), _positive("mtbf", mtbf, allow_inf=True)
    _restart(restart)
    if math.isinf(M):
        return math.inf
    a = d / M
    x = brentq(lambda x: math.expm1(x + a) * (x - 1.0) + x, 0.0, 1.0, xtol=1e-300,
               rtol=4 * 2.0 ** -52, maxiter=500)
    return M * x


def daly_interval_approx(d, mtbf) -> float:
    """Daly's higher-order estimate of the optimum (2006, the perturbation solution):
    sqrt(2 d M) [1 + sqrt(d / 2M) / 3 + (d / 2M) / 9] - d for d < 2M, else M."""
    d, M = _positive("d", d), _positive("mtbf", mtbf, allow_inf=True)
    if d >= 2.0 * M:
        return M
    x = d / (2.0 * M)
    return math.sqrt(2.0 * d * M) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - d
