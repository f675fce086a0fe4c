from __future__ import annotations

from concepts.sampling import proportional_counts, stratified_sample


def test_counts_follow_the_group_sizes_and_never_exceed_them() -> None:
    assert proportional_counts({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    assert proportional_counts({"a": 2, "b": 1, "c": 1}, 3) == {"a": 1, "b": 1, "c": 1}  # remainders 0.5, 0.75, 0.75
    assert proportional_counts({"a": 1, "b": 3}, 2) == {"a": 0, "b": 2} and proportional_counts({"a": 2, "b": 2}, 1) == {"a": 1, "b": 0}
    assert sum(proportional_counts({"a": 7, "b": 5, "c": 1}, 6).values()) == 6
    assert proportional_counts({"a": 3, "b": 2}, 99) == {"a": 3, "b": 2}  # more than there are: all of them
    assert proportional_counts({"a": 3}, 0) == {"a": 0}


def test_the_sample_is_spread_over_the_groups_and_reproducible() -> None:
    groups = {"week 1": list(range(0, 40)), "week 2": list(range(100, 120)), "week 3": list(range(200, 210))}
    drawn = stratified_sample(groups, 14, seed=3)
    assert len(drawn) == len(set(drawn)) == 14
    assert [sum(1 for i in drawn if i in ids) for ids in groups.values()] == [8, 4, 2]
    assert stratified_sample(dict(reversed(list(groups.items()))), 14, seed=3) == drawn  # order of the groups does not matter
    assert stratified_sample(groups, 14, seed=4) != drawn
