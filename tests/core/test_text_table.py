"""Aligned tables: widths from the widest cell, no trailing blanks, a row of the wrong width refused."""

from __future__ import annotations

import pytest

from oxide_git.core.text_table import table_text


def test_columns_are_as_wide_as_their_widest_cell() -> None:
    got = table_text(["ID", "N", "TITLE"], [("a1", 3, "first"), ("b22222", 10, "")])
    assert got == "ID      N   TITLE\na1      3   first\nb22222  10\n"


def test_headers_alone_when_there_is_no_row() -> None:
    assert table_text(["ID", "TITLE"], []) == "ID  TITLE\n"


def test_a_row_of_another_width_is_refused() -> None:
    with pytest.raises(ValueError):
        table_text(["A", "B", "C"], [("x", "y")])
    with pytest.raises(ValueError):
        table_text(["A", "B"], [("x", "y"), ("x", "y", "z")])
