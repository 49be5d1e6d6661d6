"""Storm risk: how often a fleet storms, simulated until precise enough.

What lives here: ``storm_risk`` (``stormrisk``: the exact law where it
applies, else plain Monte Carlo or splitting, chosen by cost), the exact
law's answer (``exact``), the ``StormRisk`` it returns (``result``), forward
flux sampling (``splitting``), its settings (``settings``: ``SplitSettings``)
and the combination of its replicates (``split_estimate``).

It imports the engine and stats wings and the root modules only.
"""
