"""Section 5 of the report page: Chen et al. Table 2 per gold standard with the cells whose relative
order agrees with the MUP order marked, and both readings of "does the MUP order follow the
intuitiveness order?" (docs/meta.md#intuitiveness).

The flags and the two readings come from ``evaluation.meta.intuitiveness`` through the analysis:
``order_vs_mup`` per concordance row (1: the two concordances are ordered as the two metrics' MUP,
-1: reversed, 0: a tie, NaN: undefined) and, per gold standard, the cell-wise count of Chen et al.
(``cells agree disagree tau_cells``) beside our per-metric ``tau_b``. Without answers there is no MUP
order, so no flag: the cells are shown unmarked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from studyapp.services.analysis.report.build import StudyReport

# css class, visible marker, words for screen readers (the marker is not the only cue: never colour alone)
ORDER_MARKS = {
    1: ("order-agrees", "✓", "ordered as MUP"),
    -1: ("order-reversed", "✗", "ordered against MUP"),
    0: ("order-tie", "=", "concordances or MUPs tied"),
}


def _fmt(value: float, digits: int = 3) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _flags(concordance: pd.DataFrame, gold: str) -> dict[tuple[str, str], int]:
    """(row metric, column metric) -> order_vs_mup of gold standard ``gold``, both orientations (the flag is symmetric)."""
    if "order_vs_mup" not in concordance.columns:
        return {}
    rows = concordance[concordance["gold"] == gold]
    out: dict[tuple[str, str], int] = {}
    for m1, m2, flag in zip(rows["measure_1"], rows["measure_2"], rows["order_vs_mup"]):
        if pd.notna(flag):
            out[m1, m2] = out[m2, m1] = int(flag)
    return out


def matrices(report: StudyReport) -> list[dict]:
    """Table 2 per gold standard: ``c1/c2 (N)`` cells, each with its order mark (or none)."""
    analysis = report.analysis
    if analysis.concordance is None:
        return []
    out = []
    for gold, block in report.tables["intuitiveness-matrix"].groupby("gold", sort=False):
        names = list(block["measure"])
        flags = _flags(analysis.concordance, gold)
        rows = []
        for _, r in block.iterrows():
            cells = []
            for column in names:
                css, mark, words = ORDER_MARKS.get(flags.get((r["measure"], column)), ("", "", ""))
                cells.append({"text": r[column], "css": css, "mark": mark, "words": words})
            rows.append({"measure": r["measure"], "cells": cells})
        marked = [v for (a, b), v in flags.items() if a < b]
        out.append(
            {
                "gold": gold,
                "columns": names,
                "rows": rows,
                "flagged": bool(flags),
                "agree": marked.count(1),
                "disagree": marked.count(-1),
            }
        )
    return out


def ordering(report: StudyReport) -> list[dict]:
    """Per gold standard: the cell-wise reading of Chen et al. and our per-metric tau_b."""
    table = report.analysis.ordering
    if table is None:
        return []
    return [
        {
            "gold": r["gold"],
            "measures": int(r["measures"]),
            "tau_b": _fmt(r["tau_b"]),
            "p": _fmt(r["p"], 4),
            "cells": int(r["cells"]),
            "agree": int(r["agree"]),
            "disagree": int(r["disagree"]),
            "tau_cells": _fmt(r["tau_cells"]),
        }
        for r in table.to_dict("records")
    ]
