"""Sweeps before they are stored: the file, its keys, its cells, their units of work.

What lives here: the key table (``keys``, built from the value checks in
``checks``), the grid (``grid``), job tables in sweep files (``jobtable``),
the sweep file resolved to seeded cells (``spec``; one cell resolved and
seeded: ``cell``), a cell's storm risk as a unit (``cellrisk``), units of
work and their exact sums (``work``), what is left and how it is cut into
units (``planner``), where units run (``executors``) and how visibly
(``progress``).

It imports the engine, stats and risk wings and the root modules only.
"""
