"""Statistics of runs: numbers with intervals, from arrays.

What lives here: survival curves (``survival``), tail probabilities
(``tails``), storm rates and durations (``storms``), checkpoint durations
and waits (``durations``), the exact stationary law of the base model
(``stationary``, with its log-space product-form sums in
``product_form``), a fleet's long-run power from that law (``power``),
the per-cell numbers every view shows (``summary``), firing-time
observables (``analysis``), Daly's law of goodput and the best checkpoint
interval without contention (``daly``), a run read in physical units
(``physical``), exact sums of floats over fleets (``exact_sums``), and
``interval``: the one type of an estimate shown to a user, a number with its
interval.

It imports the engine wing and the root modules only.
"""
