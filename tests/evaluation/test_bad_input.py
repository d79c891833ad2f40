"""Bad input that is not a file (issue 2, acceptance 4): measure strings, parameters, API arguments.

File-level problems (malformed lines, column counts, grades, probabilities, duplicates, empty and
missing files) are in ``io/test_readers.py``; the CLI's handling of all of them in ``test_cli.py``.
"""

from __future__ import annotations

import re

import pytest

from evaluation import (
    Collection,
    EvaluationError,
    Intent,
    Run,
    Topic,
    UnknownMetricError,
    build_collection,
    evaluate,
    parse_measure,
    resolve_measures,
)
from evaluation.metrics import REGISTRY, default_measures
from evaluation.metrics.base import MetricSpec
from tests.evaluation.toy import toy_collection, toy_run

# TESTS: measure strings =============================================================================


UNKNOWN_NAMES = [
    ("foo@5", ["unknown metric 'foo'"]),
    ("bpref", ["unknown metric 'bpref'", "compute it with ir_measures (ir_measures.parse_measure('bpref'))"]),
    ("d-ndcg@5", ["unknown metric 'd-ndcg'", "did you mean D-nDCG"]),
]

UNKNOWN_PARAMETERS = [
    ("alpha-nDCG(zeta=2)@5", ["alpha-nDCG", "unknown parameter 'zeta'", "accepted: alpha, graded"]),
    ("D-nDCG(gamma=0.5)@5", ["D-nDCG", "unknown parameter 'gamma'", "accepted: none"]),
    ("RBU(P=0.8)", ["RBU", "unknown parameter 'P'"]),
    ("alpha-nDCG(alpha)@5", ["alpha-nDCG", "name=value", "'alpha'"]),
]

BAD_VALUES = [
    ("alpha-nDCG(alpha=2)@5", ["alpha", "<= 1", "'2'"]),
    ("alpha-nDCG(alpha=-0.1)@5", ["alpha", ">= 0", "'-0.1'"]),
    ("alpha-nDCG(alpha=abc)@5", ["alpha", "float", "'abc'"]),
    ("alpha-nDCG(alpha=nan)@5", ["alpha", "finite"]),
    ("RBP-IA(p=0)@5", ["p", "> 0", "'0'"]),
    ("RBU(p=0,e=0.03)", ["p", "> 0"]),
    ("RBU(p=1)", ["p", "< 1.0", "'1'"]),
    ("RBU(p=1,rbu_scale=paper)", ["p", "< 1.0"]),
    ("RBU(p=1.0,rbu_scale=jar)", ["p", "< 1.0"]),
    ("RBP-IA(p=1)@5", ["p", "< 1.0"]),
    ("RBU(e=-1)", ["e", ">= 0"]),
    ("NRBP(beta=0)", ["beta", "> 0"]),
    ("D#-nDCG(gamma=1.5)@5", ["gamma", "<= 1"]),
    ("IA-ERR(err_gmax=four)@5", ["err_gmax", "per_intent", "scale", "'four'"]),
    ("RBU(rbu_scale=foo)", ["rbu_scale", "jar", "paper"]),
    ("PMP(pmp_tie=any)@5", ["pmp_tie", "lowest", "union"]),
    ("alpha-nDCG(graded=maybe)@5", ["graded", "bool", "'maybe'"]),
    ("alpha#-IA(dd_exponent_offset=0.5)@5", ["dd_exponent_offset", "int"]),
]

BAD_CUTOFFS = [
    ("D-nDCG@0", ["D-nDCG", "cutoff", "positive integer", "'0'"]),
    ("D-nDCG@-1", ["cutoff", "positive integer", "'-1'"]),
    ("D-nDCG@x", ["cutoff", "positive integer", "'x'"]),
    ("D-nDCG@", ["cutoff", "positive integer"]),
    ("D-nDCG@2.5", ["cutoff", "'2.5'"]),
    ("D-nDCG", ["D-nDCG needs a cutoff", "D-nDCG@10"]),
    ("alpha-nDCG(alpha=0.3)", ["alpha-nDCG needs a cutoff"]),
    ("D-nDCG@5@5", ["cannot parse measure"]),
    ("", ["cannot parse measure ''"]),
    ("alpha-nDCG(alpha=0.3@5", ["cannot parse measure"]),
]


@pytest.mark.parametrize(("text", "words"), UNKNOWN_NAMES + UNKNOWN_PARAMETERS + BAD_VALUES + BAD_CUTOFFS)
def test_bad_measure_strings_name_the_problem(text: str, words: list[str]) -> None:
    with pytest.raises(UnknownMetricError) as info:
        parse_measure(text)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize(("text", "words"), BAD_VALUES)
def test_bad_parameter_values_name_the_metric(text: str, words: list[str]) -> None:
    with pytest.raises(UnknownMetricError, match="^" + re.escape(text.split("(")[0] + ":")):
        parse_measure(text)


def test_cutoff_on_a_metric_that_takes_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """No registered metric has the ``none`` rule today (whole-list metrics accept an optional @k that
    truncates the run first, like ndeval ``-M``), so the rule is exercised with a stand-in spec."""
    spec = MetricSpec("WholeOnly", REGISTRY["MAP-IA"].kernel, {}, "none", frozenset(), "test", "test")
    monkeypatch.setitem(REGISTRY, "WholeOnly", spec)
    assert parse_measure("WholeOnly").cutoff is None
    with pytest.raises(UnknownMetricError, match="WholeOnly takes no cutoff"):
        parse_measure("WholeOnly@10")


def test_every_required_cutoff_metric_refuses_a_missing_cutoff() -> None:
    for name, spec in REGISTRY.items():
        if spec.cutoff == "required":
            with pytest.raises(UnknownMetricError, match="needs a cutoff"):
                parse_measure(name)
        else:
            assert parse_measure(name).cutoff is None
            assert parse_measure(f"{name}@7").cutoff == 7


def test_eu_discount_option_is_reachable_from_a_measure_string() -> None:
    """docs/metrics.md#rbu-eu-and-ct / docs/metrics.md#rbu-eu-and-ct: option eu_discount="log2(i+1)"; docs/metrics.md#measure-names: parameters go in Name(k=v)."""
    measure = parse_measure("EU(eu_discount=log2(i+1))")
    assert measure.params["eu_discount"] == "log2(i+1)"
    built = parse_measure("EU", eu_discount="log2(i+1)")
    assert parse_measure(built.canonical()) == built  # canonical strings must round-trip


def test_unknown_override_keywords() -> None:
    with pytest.raises(UnknownMetricError, match="unknown parameter 'alpha'"):
        parse_measure("D-nDCG@5", alpha=0.3)
    with pytest.raises(UnknownMetricError, match="alpha"):
        parse_measure("alpha-nDCG@5", alpha=3)
    assert parse_measure("alpha-nDCG@5", alpha=0.3).params["alpha"] == 0.3


def test_good_measure_strings_parse_and_round_trip() -> None:
    m = parse_measure("alpha-nDCG(alpha=0.3)@10")
    assert (m.name, m.params["alpha"], m.cutoff, m.condensed, m.label) == ("alpha-nDCG", 0.3, 10, False, "alpha-nDCG(alpha=0.3)@10")
    m = parse_measure("D-nDCG'@5")
    assert (m.name, m.cutoff, m.condensed) == ("D-nDCG", 5, True)
    assert parse_measure("D#-nDCG(gamma=0.5)'@20").canonical() == "D#-nDCG'@20"
    m = parse_measure("RBU(p=0.99,e=0.05)")
    assert (m.params["p"], m.params["e"], m.cutoff) == (0.99, 0.05, None)
    assert parse_measure("S-RR@100%").cutoff is None and parse_measure("S-RR@100%@10").cutoff == 10
    assert parse_measure("strec@5").name == "I-rec"  # ndeval's name is an alias
    for measure in default_measures():
        assert parse_measure(measure.canonical()) == measure  # canonical strings round-trip


# TESTS: API arguments ===============================================================================


def test_evaluate_rejects_unknown_measures_before_computing() -> None:
    with pytest.raises(UnknownMetricError, match="unknown metric 'nope'"):
        evaluate(toy_collection(), [toy_run()], ["D-nDCG@5", "nope@5"])


def test_evaluate_argument_errors() -> None:
    col, run = toy_collection(), toy_run()
    with pytest.raises(EvaluationError, match="no measure"):
        evaluate(col, [run], [])
    with pytest.raises(EvaluationError, match="no run"):
        evaluate(col, [], ["I-rec@5"])
    with pytest.raises(EvaluationError, match="given twice: toy"):
        evaluate(col, [run, toy_run()], ["I-rec@5"])
    with pytest.raises(ValueError, match="empty_topic"):
        evaluate(col, [run], ["I-rec@5"], empty_topic="skip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="topic_set"):
        evaluate(col, [run], ["I-rec@5"], topic_set="run")  # type: ignore[arg-type]


def test_all_expands_to_every_registered_metric() -> None:
    measures = resolve_measures(["all"])
    assert {m.name for m in measures} == set(REGISTRY)
    assert measures == default_measures()


def test_collection_level_errors() -> None:
    judgments = {"q": {"d1": {"1": 1, "2": 1}}}
    with pytest.raises(EvaluationError, match=r"topic q: intents 2 have no weight while others do"):
        Collection({"q": Topic("q", (Intent("1", 0.5), Intent("2", None)))}, judgments)
    with pytest.raises(EvaluationError, match="weight must be >= 0"):
        build_collection(judgments, {"q": [Intent("1", -0.5), Intent("2", 0.5)]})
    col = build_collection(judgments)
    with pytest.raises(ValueError, match="k must be >= 1"):
        col.keep_top_intents(0)
    with pytest.raises(ValueError, match="weight policy"):
        col.with_weights("popular")  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match="unknown topic"):
        col.restrict_topics(["q", "zz"])


def test_run_objects_validate() -> None:
    with pytest.raises(EvaluationError, match="name"):
        Run("", {})
    with pytest.raises(EvaluationError, match="docid a listed twice"):
        Run("r", {"q": ["a", "b", "a"]})


def test_negative_grade_in_a_directly_built_collection_is_an_error() -> None:
    """Readers map negative grades to 0 (docs/metrics.md#grades-and-gains); a Collection built by hand must not carry one."""
    from evaluation.arrays import table_for
    from evaluation.collection import Collection, Intent, Topic

    col = Collection({"t": Topic("t", (Intent("1"), Intent("2")))}, {"t": {"a": {"1": 2, "2": 1}, "b": {"1": -1, "2": 0}}})
    with pytest.raises(EvaluationError, match="topic t doc b intent 1: negative grade -1"):
        table_for(col)
