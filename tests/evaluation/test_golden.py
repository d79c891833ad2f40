"""Every row of the official tools' golden outputs is reproduced (issue 2, acceptance 1).

pyndeval rows to 1e-6, ntcireval-hp and rbu-hp rows to 1e-9, the 4-decimal official ntcireval
and rbu rows to 1.5e-4.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import pytest

from evaluation import evaluate, load_collection, read_run
from evaluation.metrics import parse_measure
from tests.evaluation.golden import REFERENCE, SETTINGS, TOOLS, GoldenKey, golden_rows, golden_value, our_measure

PUBLIC_RUNS = sorted((REFERENCE / "runs" / "public").glob("*.run"))
SAMPLE_RUNS = [REFERENCE / "ntcireval-sample" / "TRECRUN", REFERENCE / "ntcireval-sample" / "TRECRUN2"]


@cache
def collection(setting: str):
    qrels, intents = SETTINGS[setting]
    return load_collection(REFERENCE / qrels, REFERENCE / intents if intents else None)


@cache
def runs(sample: bool, order: str):
    return tuple(read_run(p, order=order) for p in (SAMPLE_RUNS if sample else PUBLIC_RUNS))


def check_file(filename: str, sample: bool) -> dict[str, int]:
    groups: dict[tuple[str, str, str], list] = defaultdict(list)
    for key, run, topic, value in golden_rows(filename):
        measure, setting = our_measure(key, sample=sample)
        groups[setting, TOOLS[key.tool][1], key.tool].append((measure, run, topic, value))
    checked: dict[str, int] = defaultdict(int)
    failures: list[str] = []
    for (setting, order, tool), rows in groups.items():
        tolerance = TOOLS[tool][0]
        measures = sorted({m for m, *_ in rows})
        frame = evaluate(collection(setting), runs(sample, order), measures, per_topic=True)
        ours = {(m, r, t): v for r, t, m, v in frame.itertuples(index=False, name=None)}
        for measure, run, topic, value in rows:
            got = ours[measure, run, topic]
            want = golden_value(value)
            if not abs(got - want) <= tolerance + 1e-12:
                failures.append(f"{tool} {measure} {run} {topic}: ours {got!r} tool {value}")
            checked[tool] += 1
    assert not failures, f"{len(failures)} mismatches, first: " + "; ".join(failures[:10])
    return checked


def test_public_golden_rows_are_reproduced() -> None:
    counts = check_file("public.tsv", sample=False)
    assert counts == {"pyndeval": 13930, "ntcireval": 31200, "ntcireval-hp": 31200, "rbu": 1600, "rbu-hp": 1600}


def test_ntcireval_sample_golden_rows_are_reproduced() -> None:
    counts = check_file("ntcireval-sample.tsv", sample=True)
    assert counts["ntcireval"] == counts["ntcireval-hp"] == 456


def test_mapping_table_covers_every_golden_key_with_a_valid_measure() -> None:
    keys = {k for k, *_ in golden_rows("public.tsv")} | {k for k, *_ in golden_rows("ntcireval-sample.tsv")}
    for key in keys:
        text, setting = our_measure(key)
        measure = parse_measure(text)
        assert setting in SETTINGS
        assert measure.cutoff == (int(key.cutoff) if key.cutoff else None)
        assert measure.condensed == ("list=condensed" in key.param)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (GoldenKey("pyndeval", "strec", "10", ""), ("I-rec@10", "qrels")),
        (GoldenKey("pyndeval", "NRBP", "", "alpha=0.3,beta=0.5"), ("NRBP(alpha=0.3,beta=0.5)", "qrels")),
        (GoldenKey("ntcireval-hp", "IA-MSnDCG", "5", "probs=linear"), ("nDCG-IA@5", "linear")),
        (GoldenKey("ntcireval", "D#-Q", "20", "probs=uniform,list=condensed"), ("D#-Q'@20", "uniform")),
        (GoldenKey("rbu-hp", "RBU", "", "p=0.99,e=0.05"), ("RBU(p=0.99,e=0.05)", "uniform")),
    ],
)
def test_mapping_examples(key: GoldenKey, expected: tuple[str, str]) -> None:
    assert our_measure(key) == expected
