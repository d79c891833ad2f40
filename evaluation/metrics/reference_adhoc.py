"""Slow reference implementations of the ad hoc baselines (docs/metrics.md#ad-hoc-baselines): the same
rules as :mod:`evaluation.metrics.reference`, whose names they are exported under (``reference.adhoc_ndcg``);
the per-document gain is the highest grade over the intents, or the global gain.
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluation.metrics.reference import RefTopic, _log_disc, div, q_measure

# docs/metrics.md#ad-hoc-baselines ------------------------------------------------------------------------------------------------


def doc_gain(t: RefTopic, doc: str, gain: str = "max") -> float:
    """The per-document gain of the ad hoc baselines: highest grade over the intents, or the global gain."""
    if gain == "global":
        return t.gg(doc)
    return float(max((t.g(doc, i) for i in t.intents), default=0))


def adhoc_ideal(t: RefTopic, gain: str = "max") -> list[float]:
    return sorted((x for x in (doc_gain(t, d, gain) for d in t.grades) if x > 0), reverse=True)


def adhoc_top(t: RefTopic, gain: str = "max", err_gmax: str = "topic") -> float:
    """``G``: the largest gain of the ideal list, or of the scale (times the weight sum for the global gain)."""
    if err_gmax == "topic":
        return max(adhoc_ideal(t, gain), default=0.0)
    scale = float(max(4, t.scale_max))
    return scale * sum(t.weights[i] for i in t.intents) if gain == "global" else scale


def adhoc_ndcg(t: RefTopic, docs: Sequence[str], l: int | None, gain: str = "max") -> float:
    """``l=None``: the whole list over the whole ideal list (trec_eval's ndcg)."""
    dcg = sum(doc_gain(t, d, gain) * _log_disc(r) for r, d in enumerate(docs[:l], start=1))
    return div(dcg, sum(g * _log_disc(r) for r, g in enumerate(adhoc_ideal(t, gain)[:l], start=1)))


def adhoc_q(t: RefTopic, docs: Sequence[str], l: int, gain: str = "max", beta: float = 1.0) -> float:
    return q_measure([doc_gain(t, d, gain) for d in docs], adhoc_ideal(t, gain), l, beta)


def adhoc_ap(t: RefTopic, docs: Sequence[str], l: int | None, gain: str = "max", ap_norm: str = "min", rel: int = 1) -> float:
    """``l=None``: the whole list over R (trec_eval's map); ``ap_norm="R"``: over R at any cutoff (map_cut);
    relevant: a positive gain and a grade >= ``rel``."""

    def relevant(d: str) -> bool:
        return doc_gain(t, d, gain) > 0 and doc_gain(t, d) >= rel

    big_r = sum(relevant(d) for d in t.grades)
    found, total = 0, 0.0
    for r, d in enumerate(docs[:l], start=1):
        if relevant(d):
            found += 1
            total += found / r
    return div(total, big_r if l is None or ap_norm == "R" else min(l, big_r))


def _stops(gains: Sequence[float], top: float) -> list[float]:
    """Stopping probabilities ``p(r) prod_{k<r} (1 - p(k))``, ``p = g / (G + 1)``."""
    out, still = [], 1.0
    for g in gains:
        p = g / (top + 1.0)
        out.append(p * still)
        still *= 1.0 - p
    return out


def adhoc_err(t: RefTopic, docs: Sequence[str], l: int, gain: str = "max", err_gmax: str = "topic") -> float:
    stops = _stops([doc_gain(t, d, gain) for d in docs[:l]], adhoc_top(t, gain, err_gmax))
    return sum(s / r for r, s in enumerate(stops, start=1))


def adhoc_nerr(t: RefTopic, docs: Sequence[str], l: int, gain: str = "max", err_gmax: str = "topic") -> float:
    ideal = _stops(adhoc_ideal(t, gain)[:l], adhoc_top(t, gain, err_gmax))
    return div(adhoc_err(t, docs, l, gain, err_gmax), sum(s / r for r, s in enumerate(ideal, start=1)))


def adhoc_rbp(t: RefTopic, docs: Sequence[str], l: int, gain: str = "max", err_gmax: str = "topic", p: float = 0.95) -> float:
    total = sum(p ** (r - 1) * doc_gain(t, d, gain) for r, d in enumerate(docs[:l], start=1))
    return (1.0 - p) * div(total, adhoc_top(t, gain, err_gmax))


def adhoc_ebr(t: RefTopic, docs: Sequence[str], l: int, gain: str = "max", err_gmax: str = "topic", beta: float = 1.0) -> float:
    """sum_r BR(r) * (stopping probability at r); BR against the ideal's cumulative gain, as in Q."""
    gains = [doc_gain(t, d, gain) for d in docs[:l]]
    ideal = adhoc_ideal(t, gain)
    total, cg, c = 0.0, 0.0, 0
    for r, (g, stop) in enumerate(zip(gains, _stops(gains, adhoc_top(t, gain, err_gmax))), start=1):
        cg += g
        if g > 0:
            c += 1
            total += stop * (beta * cg + c) / (beta * sum(ideal[:r]) + r)
    return total


def adhoc_irbu(t: RefTopic, docs: Sequence[str], l: int, gain: str = "max", err_gmax: str = "topic", p: float = 0.8) -> float:
    stops = _stops([doc_gain(t, d, gain) for d in docs[:l]], adhoc_top(t, gain, err_gmax))
    return sum(p**r * s for r, s in enumerate(stops, start=1))


# docs/metrics.md#trec_eval-measures ---------------------------------------------------------------------------------------------


def _is_rel(t: RefTopic, doc: str, rel: int) -> bool:
    return doc_gain(t, doc) >= rel


def trec_p(t: RefTopic, docs: Sequence[str], l: int, rel: int = 1) -> float:
    return sum(_is_rel(t, d, rel) for d in docs[:l]) / l


def trec_recall(t: RefTopic, docs: Sequence[str], l: int, rel: int = 1) -> float:
    return div(sum(_is_rel(t, d, rel) for d in docs[:l]), sum(_is_rel(t, d, rel) for d in t.grades))


def trec_success(t: RefTopic, docs: Sequence[str], l: int, rel: int = 1) -> float:
    return 1.0 if any(_is_rel(t, d, rel) for d in docs[:l]) else 0.0


def trec_rr(t: RefTopic, docs: Sequence[str], l: int | None = None, rel: int = 1) -> float:
    return next((1.0 / r for r, d in enumerate(docs[:l], start=1) if _is_rel(t, d, rel)), 0.0)


def judged(t: RefTopic, docs: Sequence[str], l: int | None = None) -> float:
    shown = docs[:l]
    return div(sum(d in t.grades for d in shown), len(shown))
