"""The language-bias analyses of harness.scoring.bias on two questions worked out by hand."""

from __future__ import annotations

import pytest

from harness.scoring.bias import PoolRanks, TopTie, analyse, ranks_without

# q1 (en): its en answer at rank 3, its de answer at rank 5; the en answer is 1st among en candidates
# q2 (de): its en answer at rank 2, its de answer at rank 7; the de answer is 4th among de candidates
Q1 = PoolRanks("en", ("en", "de"), (3.0, 5.0), (3.0, 5.5), (1.0,), ("de", "en", "de"))
Q2 = PoolRanks("de", ("en", "de"), (2.0, 7.0), (2.0, 7.0), (4.0,), ("de", "de", "en"))


def test_removing_candidates_moves_the_ones_below_up() -> None:
    assert ranks_without([1.0, 3.0, 5.0], [1]) == [1.0, 4.0]
    assert ranks_without([4.0, 2.0], [0]) == [2.0]


def test_every_analysis_by_hand() -> None:
    result = analyse([Q1, Q2], ("en", "de"), pool_size=2, seed=0)
    # Table 4: q1 AP 1/1, q2 AP 1/4
    assert result.monolingual_pools is not None
    assert result.monolingual_pools.map == {"en": 1.0, "de": 0.25}
    assert result.monolingual_pools.average == 0.625
    # Table 3: full (1/3 + 2/5)/2 and (1/2 + 2/7)/2; -same: de at 4 -> 1/4, en at 2 -> 1/2;
    # -rand (the only other language): en at 3 -> 1/3, de at 6 -> 1/6
    table_3 = result.remove_one_target
    assert table_3.full == pytest.approx(((1 / 3 + 2 / 5) / 2 + (1 / 2 + 2 / 7) / 2) / 2)
    assert table_3.minus_same == pytest.approx(0.375)
    assert table_3.minus_random == pytest.approx(0.25)
    assert table_3.relative_difference == pytest.approx(0.5)
    # Figure 4: q1 en alone at 3, de alone at 4; q2 en alone at 2, de alone at 6
    assert result.one_target_mrr == {
        "en": {"en": pytest.approx(1 / 3), "de": pytest.approx(1 / 4)},
        "de": {"en": pytest.approx(1 / 2), "de": pytest.approx(1 / 6)},
    }
    # Figure 6 with k = min(100, pool of 2): q1's top 2 is de, en; q2's is de, de
    assert result.top_k == 2
    assert result.top_language_mix == {"en": {"en": 0.5, "de": 0.5}, "de": {"en": 0.0, "de": 1.0}}


def test_what_the_predictions_cannot_give_is_none() -> None:
    short = PoolRanks("en", ("en",), (1.0,), (1.0,), (float("inf"),), ("en",))
    result = analyse([short], ("en",), pool_size=5, seed=0)
    assert result.monolingual_pools is None and result.top_language_mix is None
    # no other language to remove: -rand keeps the full AP (1); -same leaves no correct answer, AP 0
    table_3 = result.remove_one_target
    assert (table_3.minus_same, table_3.minus_random, table_3.relative_difference) == (0.0, 1.0, -1.0)


def test_a_tied_block_across_the_cut_shares_the_places_left() -> None:
    # top 2 of 3 listed: de, then a block of 4 equal scores (1 en, 3 de) from rank 2 on: the one
    # place left goes 1/4 to en and 3/4 to de, whatever order the ranking gave the block
    tied = PoolRanks("en", ("en",), (1.0,), (1.0,), (1.0,), ("de", "en", "de"), TopTie(2, {"en": 1, "de": 3}))
    result = analyse([tied], ("en", "de"), pool_size=2, seed=0)
    assert result.top_language_mix == {"en": {"en": 0.125, "de": 0.875}}
