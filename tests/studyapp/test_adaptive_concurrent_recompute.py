"""Two recomputations of one adaptive study at once (``allocation_priorities --every`` beside a manual run, or two
``--every`` processes): the one that read the groups before the other stored its round must not write its stale view.

Measured before the fix, three ``allocation_priorities`` started together on a 200-group study: one drew round 0 (41
groups), another drew round 1 on its stale view and wrote every group's draw back as it had read it, so no group
carried round 0 any more (its 41 draws undone while round 0 said 41), and the third died with IntegrityError on
(study, number).
"""

from __future__ import annotations

from unittest import mock

import numpy as np

from studyapp.models import AllocationGroup
from studyapp.services.analysis import adaptive as app_adaptive
from studyapp.services.analysis.adaptive import recompute
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study


def draws_agree(study) -> dict[int, tuple[int, int]]:
    """Each stored round's count of drawn groups against the groups that carry its number."""
    carried = {r.number: AllocationGroup.objects.filter(study=study, drawn_round=r.number).count() for r in study.allocation_rounds.all()}
    return {r.number: (r.drawn, carried[r.number]) for r in study.allocation_rounds.all()}


class ConcurrentRecomputeTests(BaseTestCase):
    def test_a_stale_recomputation_does_not_undo_another_ones_round(self) -> None:
        study = make_toy_study(allocation="adaptive", name="Two recomputations", levels=["topic"], items_per_annotator=3)
        read_groups, other_ran = app_adaptive.groups_of, []

        def groups_then_another_recomputation(s):
            groups = read_groups(s)  # this recomputation's view of the draws
            if not other_ran:  # meanwhile another process draws and stores a round
                other_ran.append(None)
                other_ran[0] = recompute(s, now=NOW, rng=np.random.default_rng(2))
            return groups

        with mock.patch.object(app_adaptive, "groups_of", side_effect=groups_then_another_recomputation):
            result = recompute(study, now=NOW, rng=np.random.default_rng(1))
        self.assertEqual(other_ran[0].drew, 0)
        self.assertGreater(other_ran[0].drawn_groups, 0)
        agree = draws_agree(study)
        self.assertEqual({n: drawn for n, (drawn, _) in agree.items()}, {n: carried for n, (_, carried) in agree.items()}, agree)
        self.assertNotEqual(result.drew, 0)  # the stale one did not draw round 0 again
