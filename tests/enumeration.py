"""The stationary law by brute force: every writer set's probability in exact
rationals (MODEL.md, "The stationary law"), for fleets of up to ~10 jobs,
and the small random fleets the law's tests draw."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

from hypothesis import strategies as st

import stormsim


def exact_law(fleet):
    """pi(S) over all subsets in Fractions and everything derived from it (MODEL.md):
    the dict's ``pi`` maps each writer set S (a 0/1 tuple) to its probability."""
    n = fleet.n_jobs
    T = [Fraction(float(t)) for t in fleet.T]      # sigma <= T / 20 below: mean work is T
    d = [Fraction(float(v)) for v in fleet.d]
    f = [Fraction(float(v)) for v in fleet.f]
    cap = fleet.cap

    def cmin(k):
        return Fraction(k) if math.isinf(cap) or k <= cap else Fraction(cap)

    def rc(m):  # a computer's rate with m computers
        return Fraction(1) if math.isinf(cap) or m <= cap else Fraction(cap) / m

    def g(m):
        out = Fraction(1)
        for k in range(1, m + 1):
            out *= Fraction(k) / f[k]
        for k in range(1, n - m + 1):
            out *= Fraction(k) / cmin(k)
        return out

    x = [d[i] / T[i] for i in range(n)]
    pi = {}
    for S in itertools.product((0, 1), repeat=n):
        w = g(sum(S))
        for i in range(n):
            if S[i]:
                w *= x[i]
        pi[S] = w
    Z = sum(pi.values())
    pi = {S: w / Z for S, w in pi.items()}
    size = {S: sum(S) for S in pi}
    pmf = [sum(w for S, w in pi.items() if size[S] == k) for k in range(n + 1)]
    tail = [sum(pmf[k:]) for k in range(n + 1)]
    # The two forms of nu_k of MODEL.md: firings from level k - 1, write ends from level k.
    nu_fire = [Fraction(0)] + [
        sum(w * rc(n - k + 1) * sum(1 / T[j] for j in range(n) if not S[j])
            for S, w in pi.items() if size[S] == k - 1) for k in range(1, n + 1)]
    nu_end = [Fraction(0)] + [
        sum(w * f[k] / k * sum(1 / d[i] for i in range(n) if S[i])
            for S, w in pi.items() if size[S] == k) for k in range(1, n + 1)]
    p = [sum(w for S, w in pi.items() if S[i]) for i in range(n)]
    lam = [sum(w * rc(n - size[S]) for S, w in pi.items() if not S[i]) / T[i] for i in range(n)]
    # The Poisson-binomial with the law's own p_i.
    binom = [Fraction(1)]
    for q in p:
        binom = [(binom[k] if k < len(binom) else 0) * (1 - q) + (binom[k - 1] * q if k else 0)
                 for k in range(len(binom) + 1)]
    return dict(pi=pi, pmf=pmf, tail=tail, nu_fire=nu_fire, nu_end=nu_end, p=p, lam=lam,
                duration=[None] + [tail[k] / nu_fire[k] for k in range(1, n + 1)],
                write=[p[i] / lam[i] for i in range(n)],
                stretch=[p[i] / lam[i] / d[i] for i in range(n)],
                binom=binom, binom_tail=[sum(binom[k:]) for k in range(n + 1)])



def rule(kind, n, draw_table):
    """A throughput rule by name, or for "table" a random admissible table from draws."""
    if kind == "table":
        # 0 < f(k) <= k with f(1) = 1, not monotone in general.
        return [1.0] + [u * k for u, k in zip(draw_table, range(2, n + 1))]
    return kind


@st.composite
def small_fleets(draw):
    n = draw(st.integers(1, 8))
    # Jobs drawn from a few types so that identical jobs (one leave-one-out sum
    # per type, the closed form for one type) and distinct ones both occur.
    types_ = draw(st.integers(1, n))
    pool_T = draw(st.lists(st.floats(0.3, 3.0), min_size=types_, max_size=types_))
    pool_d = draw(st.lists(st.floats(0.01, 2.0), min_size=types_, max_size=types_))
    pick = draw(st.lists(st.integers(0, types_ - 1), min_size=n, max_size=n))
    T = [pool_T[j] for j in pick]
    d = [pool_d[j] for j in pick]
    kind = draw(st.sampled_from(["fair", "ideal", "power:0.5", "table"]))
    table = draw(st.lists(st.floats(0.05, 1.0), min_size=n - 1, max_size=n - 1))
    cap = draw(st.sampled_from([math.inf, float(n), n - 0.5, n / 2, 1.0, 0.6]))
    return stormsim.Fleet(T=T, d=d, cap=cap, throughput=rule(kind, n, table),
                          jitter=[t / 50 for t in T])


