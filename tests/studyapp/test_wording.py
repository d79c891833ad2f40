"""Numbers in staff sentences: counts with their noun in the right number, rounded values never -0.00."""

from __future__ import annotations

from django.test import SimpleTestCase

from studyapp.services.wording import count, rounded


class WordingTestCase(SimpleTestCase):
    def test_counts_agree_with_their_noun(self) -> None:
        self.assertEqual(count(1, "check"), "1 check")
        self.assertEqual(count(0, "check"), "0 checks")
        self.assertEqual(count(2, "more annotator"), "2 more annotators")
        self.assertEqual(count(3, "entry", "entries"), "3 entries")
        self.assertEqual(count(1, "entry", "entries"), "1 entry")

    def test_rounded_values_have_no_negative_zero(self) -> None:
        self.assertEqual(rounded(-0.001, 2), "0.00")
        self.assertEqual(rounded(-0.0), "0.000")
        self.assertEqual(rounded(-0.006, 2), "-0.01")
        self.assertEqual(rounded(0.1234), "0.123")
        for missing in (None, float("nan"), float("inf")):
            self.assertEqual(rounded(missing), "\u2013")
        self.assertEqual(rounded(None, missing="n/a"), "n/a")
