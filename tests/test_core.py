"""The core data types: which lines an exclusion hides."""

from __future__ import annotations

from repomem.core import Exclusion, Location


def test_exclusion_around_a_cursor_hides_the_radius_either_side() -> None:
    ex = Exclusion.around("a.py", 30, 20)
    assert (ex.path, ex.start, ex.end) == ("a.py", 10, 50)
    assert ex.hides(Location("a.py", 45, 65)) and ex.hides(Location("a.py", 0, 11))
    assert not ex.hides(Location("a.py", 50, 70)) and not ex.hides(Location("b.py", 30, 31))


def test_exclusion_around_the_top_of_a_file_starts_at_its_first_line() -> None:
    assert Exclusion.around("a.py", 3, 20) == Exclusion("a.py", 0, 23)
