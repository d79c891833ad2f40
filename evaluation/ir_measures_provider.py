"""This package's metrics inside ir_measures (docs/evaluation.md#ir_measures).

ir_measures has no plugin discovery, so a provider is added by calling :func:`register_provider` once
(ir-measures installed; it is no dependency of this package)::

    import ir_measures
    from evaluation.ir_measures_provider import register_provider

    register_provider()
    ir_measures.calc_aggregate([ir_measures.parse_measure("D_sharp_nDCG@10"), ir_measures.parse_measure("RBU")], qrels, run)

It registers an ir_measures measure for every metric of ours that ir_measures lacks, named by
:func:`ir_measures_name` (``D#-nDCG`` -> ``D_sharp_nDCG``, ``P+Q#`` -> ``P_plus_Q_sharp``) with our
parameter names and defaults plus ir_measures' ``cutoff`` and ``judged_only`` (the condensed list),
and a provider named ``evaluation`` that computes them, appended to ir_measures' default pipeline.
The diversity measures both packages define (``alpha_nDCG``, ``ERR_IA``, ``NRBP``, ``P_IA``,
``StRecall``, ...) keep ir_measures' objects: the provider answers them too (with ``rel=1``), but the
pipeline asks pyndeval first; ``ir_measures.providers.registry["evaluation"]`` asks us directly.
ir_measures' own ad hoc measures keep their names and its providers: its P, R, RR, Success, Judged, AP and
nDCG objects are accepted by :func:`evaluation.evaluate` as ours (same values, docs/metrics.md#trec_eval-measures);
its ERR and RBP (gdeval's, trec_eval's) are not ours (NTCIREVAL's) and are refused.

Qrels ``iteration`` is the subtopic (intent); weights are uniform over the relevant subtopics, as in
ndeval. Runs are ordered like the command line (``order``, docs/metrics.md#runs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from evaluation.collection import build_collection, judgments_from_arrays
from evaluation.engine import score_matrix
from evaluation.exceptions import UnknownMetricError
from evaluation.io.runs import RunOrder, runs_from_arrays
from evaluation.metrics import REGISTRY, Measure, MetricSpec, get_spec
from evaluation.metrics.base import ECOSYSTEM_PARAMS

PROVIDER_NAME = "evaluation"
# ir_measures' ad hoc measures with trec_eval's definition here too (docs/metrics.md#trec_eval-measures); its
# AP@k is trec_eval's map_cut (divides by R): ours with ap_norm=R
SHARED_ADHOC = frozenset({"nDCG", "AP", "P", "R", "RR", "Judged", "Success"})
# ir_measures' ad hoc measures this package does not define, or defines differently (NTCIREVAL's ERR and RBP)
TREC_EVAL_ONLY = frozenset(
    {"ERR", "RBP", "Rprec", "Bpref", "infAP", "NumRet", "NumRel", "NumRelRet", "SetP", "SetR", "SetF", "iprec_at_recall"}
)


def ir_measures_name(name: str) -> str:
    """An ir_measures identifier for one of our metric names: ``#`` -> ``_sharp``, ``+`` -> ``_plus_``,
    anything else that is not a letter or digit -> ``_``."""
    text = name.replace("#", "_sharp").replace("+", "_plus_")
    return re.sub(r"_+", "_", re.sub(r"\W", "_", text, flags=re.ASCII)).strip("_")


def to_our_measure(measure: Any) -> Measure:
    """Our :class:`Measure` for an ir_measures measure (its name or an alias of ours, its parameters), labelled
    as ir_measures prints it. Its trec_eval measures P, R, RR, Success, Judged, AP and nDCG (linear gains) are
    ours with the same values (docs/metrics.md#trec_eval-measures; ``AP@k`` is ``AP(ap_norm=R)@k``); the ones
    this package lacks or defines differently (ERR, RBP: NTCIREVAL's here; Rprec, Bpref, ...) are refused
    with a pointer back to ir_measures."""
    name = getattr(measure, "_evaluation_spec", None) or measure.NAME
    own = not hasattr(measure, "_evaluation_spec") and not _is_ndeval_measure(measure)
    if own and (name in TREC_EVAL_ONLY or (name == "nDCG" and (measure.params.get("dcg", "log2") != "log2" or "gains" in measure.params))):
        ours = {
            "ERR": " (this package's ERR is NTCIREVAL's ad hoc baseline, docs/metrics.md#ad-hoc-baselines)",
            "RBP": " (this package's RBP is NTCIREVAL's ad hoc baseline, docs/metrics.md#ad-hoc-baselines)",
            "nDCG": " (this package's nDCG takes log2 discounts and linear gains, docs/metrics.md#trec_eval-measures)",
        }.get(name, "")
        raise UnknownMetricError(
            f"{measure} is ir_measures' (trec_eval's or gdeval's) {name}, which this package does not define: compute it with "
            f"ir_measures itself{ours}"
        )
    spec = get_spec(name)
    params, cutoff, condensed = dict(spec.defaults), None, False
    for key, value in measure.params.items():
        if key == "cutoff":
            cutoff = int(value)
            if own and name == "AP":
                params["ap_norm"] = "R"  # ir_measures' AP@k is trec_eval's map_cut_k
        elif own and name == "nDCG" and key == "dcg":
            continue  # log2: ours
        elif key in spec.params:
            params[key] = spec.params[key].parse(spec.name, key, value)
        elif key in ECOSYSTEM_PARAMS:
            parsed = ECOSYSTEM_PARAMS[key].parse(spec.name, key, value)
            condensed |= key == "judged_only" and parsed
        else:
            raise UnknownMetricError(f"{spec.name}: unknown parameter {key!r}")
    if cutoff is None and spec.cutoff == "required":
        raise UnknownMetricError(f"{spec.name} needs a cutoff, e.g. {measure.NAME}@10")
    return Measure(spec, params, cutoff, condensed, str(measure))


def _defined_mean(irm: Any) -> Any:
    """The mean over the topics where the measure is defined (NaN ones left out, as ``evaluate`` does:
    docs/metrics.md#relevance-and-empty-topics, PMP's equal weights)."""

    class DefinedMean(irm.measures.MeanAgg):
        def add(self, value: float) -> None:
            if value == value:
                super().add(value)

    return DefinedMean()


# topic-averaging parameters (alpha#-IA tavg): ir_measures averages the per-topic values itself
TOPIC_AVERAGING = ("tavg", "dd_exponent_offset")


def _param_info(irm: Any, spec: MetricSpec) -> dict[str, Any]:
    info = irm.measures.ParamInfo
    out = {"judged_only": info(dtype=bool, default=False, desc="drop unjudged documents first (the condensed list)")}
    if spec.cutoff != "none":
        out["cutoff"] = info(dtype=int, required=spec.cutoff == "required", desc="ranking cutoff")
    for key, param in spec.params.items():
        if key in TOPIC_AVERAGING:
            continue
        dtype = (int, float) if param.type is float else param.type
        choices = param.choices if param.choices is not None else irm.providers.base.NOT_PROVIDED
        out[key] = info(dtype=dtype, default=param.default, choices=choices, desc=param.doc)
    return out


def _is_ndeval_measure(measure: Any) -> bool:
    """One of ir_measures' diversity measures (its ndeval family: alpha_nDCG, ERR_IA, NRBP, ...), which
    this package reproduces under its own names."""
    return measure is not None and type(measure).__module__ == "ir_measures.measures.diversity"


def _measures(irm: Any) -> list[Any]:
    """ir_measures measure objects for every metric of ours: ir_measures' own where it has the metric
    (an alias of ours), a newly registered one otherwise (skipped where the name means another metric)."""
    found = []
    for spec in REGISTRY.values():
        shared = [name for name in (spec.name, *spec.aliases) if _is_ndeval_measure(irm.measures.registry.get(name))]
        if shared:
            found.append(irm.measures.registry[shared[0]])
            continue
        name = ir_measures_name(spec.name)
        existing = irm.measures.registry.get(name)
        if existing is not None:
            if getattr(existing, "_evaluation_spec", None) == spec.name:
                found.append(existing)  # registered by an earlier call
            continue  # ir_measures' own metric of that name (nDCG, AP, ERR, RBP)
        attributes = {
            "__name__": name,
            "NAME": name,
            "SUPPORTED_PARAMS": _param_info(irm, spec),
            "PRETTY_NAME": spec.name,
            "SHORT_DESC": spec.summary,
            "DEFAULT": float("nan"),
            "aggregator": lambda self: _defined_mean(irm),
            "_evaluation_spec": spec.name,
        }
        measure = type(f"_{name}", (irm.measures.Measure,), attributes)()
        irm.measures.register(measure)
        found.append(measure)
    return found


def _supported(irm: Any, measure: Any) -> Any:
    """The provider's pattern for ``measure``: every parameter accepted, ``rel`` only at 1, the cutoff
    required where ours requires one."""
    base = irm.providers.base
    spec = get_spec(getattr(measure, "_evaluation_spec", None) or measure.NAME)
    patterns = {key: base.Any() for key in measure.SUPPORTED_PARAMS}
    if "rel" in patterns:
        patterns["rel"] = base.Choices(1)
    if "cutoff" in patterns and spec.cutoff == "required":
        patterns["cutoff"] = base.Any(required=True)
    return measure(**patterns)


def provider_class(irm: Any) -> type:
    """The provider class, built on the installed ir_measures (``irm``)."""

    class EvaluationProvider(irm.providers.Provider):
        """Diversity metrics of the ``evaluation`` package (D#-nDCG, DIN#-Q, P+Q#, RBU, alpha#-IA, ...)."""

        NAME = PROVIDER_NAME

        def __init__(self, order: RunOrder = "score") -> None:
            super().__init__()
            self.order = order
            self.SUPPORTED_MEASURES = [_supported(irm, m) for m in _measures(irm)]

        def _evaluator(self, measures: Iterable[Any], qrels: Any) -> Any:
            return Evaluator(list(measures), qrels, self.order)

    class Evaluator(irm.providers.Evaluator):
        def __init__(self, measures: list[Any], qrels: Any, order: RunOrder) -> None:
            records = list(irm.util.QrelsConverter(qrels).as_namedtuple_iter())
            intents = [str(getattr(q, "iteration", "1")) for q in records]
            judgments = judgments_from_arrays(
                [str(q.query_id) for q in records], intents, [str(q.doc_id) for q in records], [int(q.relevance) for q in records]
            )
            self.collection = build_collection(judgments)
            self.ours = [to_our_measure(m) for m in measures]
            self.order = order
            super().__init__(measures, set(self.collection.topic_ids))

        def _iter_calc(self, run: Any) -> Iterator[Any]:
            docs = list(irm.util.RunConverter(run).as_namedtuple_iter())
            if not docs:
                return
            runs = runs_from_arrays(
                ["run"] * len(docs),
                [str(d.query_id) for d in docs],
                [str(d.doc_id) for d in docs],
                [d.score for d in docs],
                order=self.order,
            )
            values = score_matrix(self.collection, runs, self.ours)[:, 0, :]
            for measure, row in zip(self.measures, values):
                for topic, value in zip(self.collection.topic_ids, row):
                    yield irm.Metric(query_id=topic, measure=measure, value=float(value))

    return EvaluationProvider


def register_provider(order: RunOrder = "score") -> Any:
    """Register (or replace) the ``evaluation`` provider in ir_measures and its default pipeline; returns it.

    ``order``: how run lines become lists (docs/metrics.md#runs): ``score`` (score desc, docid desc,
    trec_eval's), ``pyndeval`` (docid asc on ties), ``rank`` or ``file``.
    """
    import ir_measures

    provider = provider_class(ir_measures)(order)
    ir_measures.providers.register(provider)
    pipeline = ir_measures.DefaultPipeline.providers
    pipeline[:] = [p for p in pipeline if getattr(p, "NAME", None) != PROVIDER_NAME] + [provider]
    return provider
