"""Storm risk: how often a fleet storms, simulated until precise enough.

What lives here: ``storm_risk`` (``stormrisk``: plain Monte Carlo or
splitting, chosen by cost), forward flux sampling (``splitting``), its
settings (``settings``: ``SplitSettings``) and the combination of its
replicates (``split_estimate``).

It imports the engine and stats wings and the root modules only.
"""
