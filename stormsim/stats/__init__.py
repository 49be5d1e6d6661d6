"""Statistics of runs: numbers with intervals, from arrays.

What lives here: survival curves (``survival``), tail probabilities
(``tails``), storm rates and durations (``storms``), the per-cell numbers
every view shows (``summary``), firing-time observables (``analysis``), a
run read in physical units (``physical``), exact sums of floats over fleets
(``exact_sums``).

It imports the engine wing and the root modules only.
"""
