"""The levels k of P(n_w >= k), as every face takes them: integers, 'N' or
'N/q' (k = ceil(N/q)), one by one or as one text '2,N/4' (stormsim._args)."""
import numpy as np
import pytest

from stormsim._args import check_levels, split_levels, tail_level
from stormsim.errors import SpecError


def test_a_level_is_an_integer_n_or_n_over_q():
    assert [tail_level(x, 10) for x in (3, "3", " N ", "N/3", "N / 4", np.int64(10))] == [3, 3, 10, 4, 3, 10]
    for bad, message in ((11, "k = 11, above N = 10"), ("N/0.5", "q must be >= 1"),
                         (0, "k must be an integer >= 1"), ("2k", "must be an integer k, 'N' or")):
        with pytest.raises(SpecError, match=message):
            tail_level(bad, 10)


def test_a_text_of_levels_is_split_and_checked():
    assert split_levels("2, N/4,,N") == ("2", "N/4", "N")
    assert split_levels("") == ()
    with pytest.raises(SpecError, match=r"tail level 'N/x'"):
        split_levels("2,N/x")


def test_levels_as_text_only_where_asked():
    assert check_levels("levels", "2,N/4,N/2", 16, text=True).tolist() == [2, 4, 8]
    assert check_levels("levels", ["N", "16"], 16, text=True).tolist() == [16]   # once
    assert check_levels("levels", [4, 2], 16, text=True).tolist() == [2, 4]
    with pytest.raises(SpecError, match=r"levels = '2,N/0\.5': tail level 'N/0\.5'"):
        check_levels("levels", "2,N/0.5", 16, text=True)
    with pytest.raises(SpecError, match="must be an integer level k in 1..N = 16"):
        check_levels("levels", "N/4", 16)
    with pytest.raises(SpecError, match="each level once"):
        check_levels("levels", [2, 2], 16)
