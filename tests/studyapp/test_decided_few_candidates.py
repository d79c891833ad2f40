"""With at most 3 candidate metrics the best set has at most 3 entries from the first look on, so "at most 3 entries"
alone said "decided" (and the dashboard claimed a saving) before any answer could have told the candidates apart
(seen on a 14-topic study with 3 candidates: "decided after 160 answers, saved 7.13x"). There the signal also needs a
candidate left out of the best set; with 4 or more candidates it is unchanged."""

from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import numpy as np

from studyapp.models import AllocationGroup
from studyapp.services.analysis import decided_signal
from studyapp.services.analysis.adaptive import recompute
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study

SERVICE = "studyapp.services.analysis.adaptive"
CANDIDATES = "alpha-nDCG@10,P-IA@10,ERR@10"


def claim(members: tuple[str, ...], entries: tuple[str, ...] | None = None) -> SimpleNamespace:
    entries = members if entries is None else entries
    return SimpleNamespace(members=members, entries=entries, decided=len(entries) <= 3, chosen=SimpleNamespace(leaders=members[:1]))


def test_the_rule() -> None:
    three = ("a", "b", "c")
    assert not decided_signal.decided(claim(three), 3)  # every candidate still in: nothing decided
    assert not decided_signal.decided(claim(three, ("a", "b")), 3)  # merged, none left out
    assert decided_signal.decided(claim(("a", "b")), 3)  # one left out
    assert decided_signal.decided(claim(three), 6)  # 6 candidates down to 3 entries: as before
    assert not decided_signal.decided(claim(("a", "b", "c", "d")), 6)


class FewCandidatesTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(
            allocation="adaptive", name="Three", levels=["topic"], items_per_annotator=3, candidate_metrics=CANDIDATES
        )

    def run_with(self, members_of) -> bool:
        """The decided flag of a round drawn (a look) while the mocked best set holds ``members_of(candidates)``."""

        def fake(d, p, measures, **options):
            return claim(members_of(tuple(measures)))

        rows = AllocationGroup.objects.filter(study=self.study)
        rows.update(drawn_round=-1)
        rows.filter(pk=rows.order_by("pk").values_list("pk", flat=True)[0]).update(drawn_round=0, probability=0.5)
        with (
            mock.patch(f"{SERVICE}.adaptive.contenders", side_effect=fake),
            mock.patch(f"{SERVICE}.analysis_round", return_value=0),
            mock.patch(f"{SERVICE}.round_due", return_value=True),
            mock.patch(f"{SERVICE}.RESERVE", 1e9),
        ):
            drew = recompute(self.study, now=NOW, rng=np.random.default_rng(3)).drew
        self.assertIsNotNone(drew)
        return self.study.allocation_rounds.get(number=drew).decided

    def test_three_candidates_all_in_the_best_set_are_not_decided(self) -> None:
        recompute(self.study, now=NOW, rng=np.random.default_rng(1))
        self.assertFalse(self.run_with(lambda measures: measures))
        self.assertTrue(self.run_with(lambda measures: measures[:2]))


def test_the_dashboard_states_the_rule() -> None:
    from django.template.loader import render_to_string

    page = render_to_string("studyapp/staff/_adaptive.html", {"adaptive": {"decided_at": 160, "max_looks": 20, "look_alpha": 0.0025}})
    assert "with at most 3 candidates one of them out of it" in page
