"""F1 golden cases: the reference's outputs before E8 (commit 8d49c28)."""
import math

INF = math.inf


def cases():
    """(name, args, kwargs) of simulate_reference: blocking, jitter, cap, async, skip,
    weights, writer cap, burn-in and passage."""
    fair4 = [math.nan, 1.0, 1.0, 1.0, 1.0]
    ideal3 = [math.nan, 1.0, 2.0, 3.0]
    return [
        ("blocking_fair", ([1.0, 1.3, 0.7, 2.0], [0.3, 0.2, 0.5, 0.4], [0.0] * 4, INF, fair4,
                           [0.1, 0.5, 0.9, 0.0], 8), {"burn_in": 2}),
        ("jitter_cap", ([1.0] * 4, [0.4] * 4, [0.2] * 4, 2.5, fair4, [0.0, 0.25, 0.5, 0.75], 10),
         {"burn_in": 3, "key": (12345, 678), "fleet": 3}),
        ("async_mixed", ([1.0, 1.5, 0.8], [0.5, 0.4, 0.9], [0.1, 0.0, 0.05], INF, ideal3,
                         [0.2, 0.6, 1.0], 9),
         {"checkpoint": ["async", "blocking", "async"], "snapshot": [0.1, 0.0, 0.0],
          "slowdown": [0.3, 0.0, 1.0], "on_busy": ["block", "block", "skip"], "key": (1, 2)}),
        ("weights_writer_cap", ([1.0, 1.0, 1.2, 0.9], [0.6, 0.5, 0.4, 0.7], [0.05] * 4, 3.0, fair4,
                                [0.0, 0.1, 0.2, 0.3], 8),
         {"weights": [1.0, 2.0, 0.5, 1.0], "max_writers": 2, "key": (99, 98), "burn_in": 1}),
        ("passage", ([1.0] * 4, [0.3] * 4, [0.1] * 4, INF, fair4, [0.0, 0.3, 0.6, 0.9], 20),
         {"level": 3, "key": (5, 6)}),
        ("async_writer_cap", ([1.0, 1.1, 0.9], [0.7, 0.8, 0.6], [0.1] * 3, 2.0, ideal3,
                              [0.5, 0.0, 0.25], 8),
         {"checkpoint": ["async"] * 3, "snapshot": [0.05] * 3, "slowdown": [0.2] * 3,
          "max_writers": 1, "key": (7, 8), "burn_in": 2}),
    ]
