"""An adaptive study's draws as a report file, ``allocation-groups.csv``: with ``preferences.csv`` beside it, what
the design-weighted table is computed from (docs/data-dictionary.md#allocation-groups)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from studyapp.models import Study
from studyapp.services.analysis.adaptive import groups_of, two_phase_weights

ALLOCATION_TABLE = "allocation-groups"  # written as allocation-groups.csv
COLUMNS = [
    "topic",
    "run_a",
    "run_b",
    "answers",
    "slots",
    "drawn_round",
    "probability",
    "full",
    "full_probability",
    "entry_weight",
    "full_weight",
    "priority",
    "disputed_by",
]


def allocation_groups(study: Study) -> tuple[pd.DataFrame, int | None]:
    """One row per run-pair group: its valid answers so far and its answer slots (presentations x k), its stored draw (round, probability, full flag and chance), its weights in the
    design-weighted estimates at the analysis round (:func:`studyapp.services.analysis.adaptive.two_phase_weights`:
    the entry weight pooled over the rounds, the full groups' entry weight over their chance of being full; 0 for a
    group not drawn by then) and its dispute weight at the last recomputation; and that round (None while no round is
    complete: every weight 0)."""
    groups = groups_of(study)
    weights = two_phase_weights(study)
    frame = pd.DataFrame(
        {
            "topic": [name[0] for name in groups.names],
            "run_a": [name[1] for name in groups.names],
            "run_b": [name[2] for name in groups.names],
            "answers": groups.answers.astype(int),
            "slots": groups.slots.astype(int),
            "drawn_round": groups.drawn_round,
            "probability": groups.probability,
            "full": groups.full,
            "full_probability": groups.full_probability,
            "entry_weight": [weights.entry.get(name, 0.0) for name in groups.names],
            "full_weight": [weights.full.get(name, 0.0) for name in groups.names],
            "priority": [g.priority for g in groups.rows],
            "disputed_by": [g.disputed_by for g in groups.rows],
        }
    )
    return frame[COLUMNS], weights.analysis_round


def allocation_groups_table(study: Study) -> pd.DataFrame:
    """:func:`allocation_groups` as the report's table ``allocation-groups`` (``full`` as true/false, as the
    preference export writes booleans, and with ``full_probability`` empty/nan for a group not drawn; written and
    downloaded as CSV like every table of the report)."""
    frame, _ = allocation_groups(study)
    drawn = frame["drawn_round"] >= 0  # a group not drawn has no second phase: its stored flag and chance are defaults
    return frame.assign(
        full=np.where(drawn, frame["full"].map({True: "true", False: "false"}), ""),
        full_probability=frame["full_probability"].where(drawn),
    )
