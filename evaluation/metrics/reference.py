"""Slow reference implementations: one loop per rank, written from the formulas of docs/metrics.md.

Each registered metric's kernel is checked against its function here, or for the ad hoc baselines in
:mod:`evaluation.metrics.reference_adhoc` (``tests/evaluation/metrics/test_against_reference.py``). These functions read a
:class:`~evaluation.collection.Collection` only through its plain accessors (topics, intents,
``weights``, ``judgments``) and never touch the vectorised engine, so they check it independently.
Every function takes one topic's view (:class:`RefTopic`) and one ranked list (docids, best first,
already free of duplicates) and returns a float. They are for reading and testing, not for speed.

Conventions (docs/metrics.md#data-conventions):

* ``I_q^+`` = intents with a document of grade >= 1; intents outside it are invisible.
  NTCIREVAL-family sums use the weights as given; the ndeval family divides by ``W+``.
* The greedy alpha ideal (docs/metrics.md#ideal-lists) runs over every judged document; each step
  takes the maximum of ``s(d) = sum_i a_i J_i(d) (1-alpha)^{c_i}`` (``a_i = 1`` when the weights
  over ``I_q^+`` are all equal, as in ndeval, else ``w_i / W+``), summed intent by intent in
  canonical intent order like ndeval's C loop; ties go to the lexicographically greatest docid
  (ndeval scans docids in ascending order and replaces the best on ``strcmp(candidate, best) > 0``).
* Condensed lists drop unjudged documents before the cutoff (:func:`condense`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.collection import Collection


@dataclass
class RefTopic:
    """One topic of a collection as plain Python data."""

    intents: list[str]
    weights: dict[str, float]
    nav: set[str]
    grades: dict[str, dict[str, int]]  # doc -> intent -> grade (judged docs only)
    scale_max: int  # largest grade of the whole collection (err_gmax="scale": max(4, it))

    @classmethod
    def of(cls, collection: Collection, topic: str) -> RefTopic:
        t = collection.topics[topic]
        scale = max((g for docs in collection.judgments.values() for gr in docs.values() for g in gr.values()), default=0)
        return cls(
            intents=list(t.intent_ids),
            weights=dict(collection.weights(topic)),
            nav={i.id for i in t.intents if i.type == "nav"},
            grades={d: dict(g) for d, g in collection.judgments.get(topic, {}).items()},
            scale_max=scale,
        )

    def g(self, doc: str, intent: str) -> int:
        return self.grades.get(doc, {}).get(intent, 0)

    def J(self, doc: str, intent: str) -> int:
        return 1 if self.g(doc, intent) >= 1 else 0

    @property
    def rel_intents(self) -> list[str]:
        """``I_q^+`` in canonical order."""
        return [i for i in self.intents if any(self.g(d, i) >= 1 for d in self.grades)]

    @property
    def w_plus(self) -> float:
        return sum(self.weights[i] for i in self.rel_intents)

    def w_hat(self, intent: str) -> float:
        return div(self.weights[intent], self.w_plus)

    def relevant(self, intent: str) -> list[str]:
        return [d for d in self.grades if self.g(d, intent) >= 1]

    def gg(self, doc: str) -> float:
        """Global gain ``sum_i w_i g_i(d)`` (docs/metrics.md#grades-and-gains)."""
        return sum(self.weights[i] * self.g(doc, i) for i in self.intents)

    def global_ideal(self) -> list[float]:
        return sorted((x for x in (self.gg(d) for d in self.grades) if x > 0), reverse=True)

    def intent_ideal(self, intent: str) -> list[int]:
        return sorted((self.g(d, intent) for d in self.relevant(intent)), reverse=True)


def condense(topic: RefTopic, docs: Sequence[str]) -> list[str]:
    """docs/metrics.md#condensed-lists: drop unjudged documents (judged-nonrelevant ones stay)."""
    return [d for d in docs if d in topic.grades]


def div(num: float, den: float) -> float:
    """``num / den``, 0 when the ideal is 0 (nothing to find). The definitions do not cover a topic whose
    relevant intents all have weight 0 (``W+ = 0``, no positive global gain); 0 is the engine's
    documented convention and the only value consistent with "no gain" (docs/metrics.md#edge-cases)."""
    return num / den if den != 0 else 0.0


def _log_disc(r: int) -> float:
    return 1.0 / math.log2(r + 1)


# docs/metrics.md#coverage-and-set-metrics ------------------------------------------------------------------------------------------------


def i_rec(t: RefTopic, docs: Sequence[str], l: int) -> float:
    rel = t.rel_intents
    covered = [i for i in rel if any(t.J(d, i) for d in docs[:l])]
    return len(covered) / len(rel)


# docs/metrics.md#intent-aware-metrics ------------------------------------------------------------------------------------------------


def _err(probabilities: Sequence[float]) -> float:
    total, still = 0.0, 1.0
    for r, p in enumerate(probabilities, start=1):
        total += p / r * still
        still *= 1.0 - p
    return total


def ia_nerr(t: RefTopic, docs: Sequence[str], l: int, err_gmax: str = "per_intent") -> float:
    total = 0.0
    for i in t.rel_intents:
        big_g = max(t.intent_ideal(i)) if err_gmax == "per_intent" else max(4, t.scale_max)
        err = _err([t.g(d, i) / (big_g + 1) for d in docs[:l]])
        ideal = _err([g / (big_g + 1) for g in t.intent_ideal(i)[:l]])
        total += t.weights[i] * div(err, ideal)
    return total


def ia_err(t: RefTopic, docs: Sequence[str], l: int) -> float:
    return sum(t.weights[i] * _err([t.g(d, i) / (max(t.intent_ideal(i)) + 1) for d in docs[:l]]) for i in t.rel_intents)


def ndcg_ia(t: RefTopic, docs: Sequence[str], l: int) -> float:
    total = 0.0
    for i in t.rel_intents:
        dcg = sum(t.g(d, i) * _log_disc(r) for r, d in enumerate(docs[:l], start=1))
        ideal = sum(g * _log_disc(r) for r, g in enumerate(t.intent_ideal(i)[:l], start=1))
        total += t.weights[i] * div(dcg, ideal)
    return total


def map_ia(t: RefTopic, docs: Sequence[str]) -> float:
    """docs/metrics.md#intent-aware-metrics (ndeval): AP_i over the whole list, weighted by w_i / W+."""
    total = 0.0
    for i in t.rel_intents:
        found, ap = 0, 0.0
        for r, d in enumerate(docs, start=1):
            if t.J(d, i):
                found += 1
                ap += found / r
        total += t.w_hat(i) * ap / len(t.relevant(i))
    return total


# docs/metrics.md#cascade-metrics ------------------------------------------------------------------------------------------------


def _v(t: RefTopic, doc: str, intent: str, graded: bool) -> float:
    """``J_i(d)``, or ``g_i(d) / G_i`` with ``graded=True`` (docs/metrics.md#cascade-metrics option, Amigó et al.'s form)."""
    if not graded:
        return t.J(doc, intent)
    return t.g(doc, intent) / max(t.intent_ideal(intent))


def novelty_gains(t: RefTopic, docs: Sequence[str], alpha: float, graded: bool = False) -> list[float]:
    """``n(r) = sum_{I_q^+} (w_i / W+) J_i(r) (1-alpha)^{c_i(r)}`` (``c_i`` always counts binary hits)."""
    counts = {i: 0 for i in t.rel_intents}
    out = []
    for d in docs:
        out.append(sum(t.w_hat(i) * _v(t, d, i, graded) * (1.0 - alpha) ** counts[i] for i in t.rel_intents))
        for i in t.rel_intents:
            counts[i] += t.J(d, i)
    return out


def greedy_ideal(t: RefTopic, alpha: float, graded: bool = False) -> list[str]:
    """docs/metrics.md#ideal-lists: the greedy list over every judged document, ties to the greatest docid."""
    rel = t.rel_intents
    ws = [t.weights[i] for i in rel]
    uniform = all(w == ws[0] for w in ws)
    coef = {i: 1.0 if uniform else t.w_hat(i) for i in rel}
    counts = {i: 0 for i in rel}
    left = sorted(t.grades)
    order = []
    while left:
        best, best_score = None, -1.0
        for d in left:  # ascending docids; a later equal score wins (strcmp(candidate, best) > 0)
            s = 0.0
            for i in rel:
                s = s + _v(t, d, i, graded) * (coef[i] * (1.0 - alpha) ** counts[i])
            if s > best_score or (s == best_score and d > best):
                best, best_score = d, s
        order.append(best)
        left.remove(best)
        for i in rel:
            counts[i] += t.J(best, i)
    return order


def alpha_ndcg(t: RefTopic, docs: Sequence[str], k: int, alpha: float = 0.5, graded: bool = False) -> float:
    num = sum(n * _log_disc(r) for r, n in enumerate(novelty_gains(t, docs[:k], alpha, graded), start=1))
    ideal = greedy_ideal(t, alpha, graded)[:k]
    den = sum(n * _log_disc(r) for r, n in enumerate(novelty_gains(t, ideal, alpha, graded), start=1))
    return div(num, den)


def nerr_ia(t: RefTopic, docs: Sequence[str], k: int, alpha: float = 0.5) -> float:
    num = sum(n / r for r, n in enumerate(novelty_gains(t, docs[:k], alpha), start=1))
    ideal = greedy_ideal(t, alpha)[:k]
    return div(num, sum(n / r for r, n in enumerate(novelty_gains(t, ideal, alpha), start=1)))


def err_ia(t: RefTopic, docs: Sequence[str], k: int, alpha: float = 0.5, graded: bool = False) -> float:
    """ndeval's ERR-IA: normalised by the ideal-ideal list (every doc relevant to every intent)."""
    num = sum(n / r for r, n in enumerate(novelty_gains(t, docs[:k], alpha, graded), start=1))
    return num / sum((1.0 - alpha) ** (r - 1) / r for r in range(1, k + 1))


def nrbp(t: RefTopic, docs: Sequence[str], alpha: float = 0.5, beta: float = 0.5, graded: bool = False) -> float:
    """docs/metrics.md#cascade-metrics: (1 - (1-alpha) beta) sum_r beta^(r-1) n(r) over the whole list (n already divided by W+)."""
    gains = novelty_gains(t, docs, alpha, graded)
    return (1.0 - (1.0 - alpha) * beta) * sum(beta ** (r - 1) * n for r, n in enumerate(gains, start=1))


# docs/metrics.md#d-measures / docs/metrics.md#din-measures-and-pq -----------------------------------------------------------------------------------------


def q_measure(gains: Sequence[float], ideal: Sequence[float], l: int, beta: float = 1.0) -> float:
    """docs/metrics.md#d-measures Q@l; ``ideal`` = all positive ideal gains, descending."""
    big_r = len(ideal)
    if big_r == 0:
        return 0.0
    total, cg, c = 0.0, 0.0, 0
    for r, g in enumerate(gains[:l], start=1):
        cg += g
        if g > 0:
            c += 1
            total += (beta * cg + c) / (beta * sum(ideal[: min(r, big_r)]) + r)
    return total / min(l, big_r)


def d_ndcg(t: RefTopic, docs: Sequence[str], l: int) -> float:
    dcg = sum(t.gg(d) * _log_disc(r) for r, d in enumerate(docs[:l], start=1))
    return div(dcg, sum(g * _log_disc(r) for r, g in enumerate(t.global_ideal()[:l], start=1)))


def d_q(t: RefTopic, docs: Sequence[str], l: int, beta: float = 1.0) -> float:
    return q_measure([t.gg(d) for d in docs], t.global_ideal(), l, beta)


def d_sharp_ndcg(t: RefTopic, docs: Sequence[str], l: int, gamma: float = 0.5) -> float:
    return gamma * i_rec(t, docs, l) + (1.0 - gamma) * d_ndcg(t, docs, l)


def din_gains(t: RefTopic, docs: Sequence[str]) -> list[float]:
    """docs/metrics.md#din-measures-and-pq: a navigational intent earns only at the first retrieved document relevant to it."""
    found: set[str] = set()
    out = []
    for d in docs:
        gain = 0.0
        for i in t.intents:
            g = t.g(d, i)
            if i not in t.nav:
                gain += t.weights[i] * g
            elif g > 0 and i not in found:
                gain += t.weights[i] * g
        found |= {i for i in t.nav if t.g(d, i) > 0}
        out.append(gain)
    return out


def din_q(t: RefTopic, docs: Sequence[str], l: int, beta: float = 1.0) -> float:
    return q_measure(din_gains(t, docs), t.global_ideal(), l, beta)


def din_ndcg(t: RefTopic, docs: Sequence[str], l: int) -> float:
    dcg = sum(g * _log_disc(r) for r, g in enumerate(din_gains(t, docs)[:l], start=1))
    return div(dcg, sum(g * _log_disc(r) for r, g in enumerate(t.global_ideal()[:l], start=1)))


def p_plus(gains: Sequence[int], ideal: Sequence[int], l: int, beta: float = 1.0) -> float:
    """docs/metrics.md#din-measures-and-pq P+ on the list cut at l, BR from the per-intent ideal."""
    cut = list(gains[:l])
    if not any(g > 0 for g in cut):
        return 0.0
    top = max(cut)
    preferred = cut.index(top) + 1
    total, cg, c = 0.0, 0.0, 0
    for r, g in enumerate(cut[:preferred], start=1):
        cg += g
        if g > 0:
            c += 1
            total += (beta * cg + c) / (beta * sum(ideal[: min(r, len(ideal))]) + r)
    return total / c


def pplus_q(t: RefTopic, docs: Sequence[str], l: int, beta: float = 1.0) -> float:
    total = 0.0
    for i in t.rel_intents:
        gains = [t.g(d, i) for d in docs]
        ideal = t.intent_ideal(i)
        value = p_plus(gains, ideal, l, beta) if i in t.nav else q_measure(gains, ideal, l, beta)
        total += t.weights[i] * value
    return total


# docs/metrics.md#rbu-eu-and-ct ------------------------------------------------------------------------------------------------


def rbu(t: RefTopic, docs: Sequence[str], k: int | None = None, p: float = 0.8, e: float = 0.03) -> float:
    """RBU jar: every listed aspect with its weight as given, r = (2^g - 1)/2^gmax_t."""
    shown = list(docs if k is None else docs[:k])
    utility = 0.0
    for a in t.intents:
        gmax = max((t.g(d, a) for d in t.grades), default=0)
        still = 1.0
        for i, d in enumerate(shown, start=1):
            r = (2.0 ** t.g(d, a) - 1.0) / 2.0**gmax
            utility += t.weights[a] * p ** (i - 1) * r * still
            still *= 1.0 - r
    effort = e * sum(p ** (i - 1) for i in range(1, len(shown) + 1))
    return (1.0 - p) * (utility - effort)


# docs/metrics.md#alpha-ia-and-diversity-difficulty ------------------------------------------------------------------------------------------------


def _golbus_discount(disc: str, r: int, beta: float) -> float:
    return {"dcg": _log_disc(r), "err": 1.0 / r, "rbp": beta ** (r - 1)}[disc]


def alpha_m_i(t: RefTopic, docs: Sequence[str], intent: str, k: int, alpha: float, disc: str, beta: float) -> float:
    """Per-subtopic cascade measure over its exact ideal (all of R_i first)."""
    num, seen = 0.0, 0
    for r, d in enumerate(docs[:k], start=1):
        if t.J(d, intent):
            num += _golbus_discount(disc, r, beta) * (1.0 - alpha) ** seen
            seen += 1
    n_rel = min(k, len(t.relevant(intent)))
    den = sum(_golbus_discount(disc, r, beta) * (1.0 - alpha) ** (r - 1) for r in range(1, n_rel + 1))
    return div(num, den)


def alpha_sharp_micro(
    t: RefTopic, docs: Sequence[str], k: int, alpha: float = 0.3, lam: float = 0.5, disc: str = "dcg", beta: float = 0.8
) -> float:
    """lambda S-recall@k + (1 - lambda) sum_i w_i alphaM_i@k (weights renormalised over I_q^+)."""
    micro = sum(t.w_hat(i) * alpha_m_i(t, docs, i, k, alpha, disc, beta) for i in t.rel_intents)
    return lam * i_rec(t, docs, k) + (1.0 - lam) * micro


# further metrics (docs/metrics.md#coverage-and-set-metrics to docs/metrics.md#alpha-ia-and-diversity-difficulty) ---------------------------


def prec(t: RefTopic, docs: Sequence[str], l: int) -> float:
    return sum(1 for d in docs[:l] if any(t.J(d, i) for i in t.intents)) / l


def pmp(t: RefTopic, docs: Sequence[str], l: int, pmp_tie: str = "lowest", pmp_equal: str = "nan") -> float:
    """docs/metrics.md#coverage-and-set-metrics: NaN when all weights over I_q^+ are equal and M+ > 1
    (pmp_equal=nan; pmp_equal=tie lets the tie rule decide); ties: lowest id or union."""
    rel = t.rel_intents
    ws = [t.weights[i] for i in rel]
    if pmp_equal == "nan" and len(rel) > 1 and all(w == ws[0] for w in ws):
        return math.nan
    top = max(ws)
    chosen = [i for i in rel if t.weights[i] == top]
    if pmp_tie == "lowest":
        chosen = chosen[:1]
    return sum(1 for d in docs[:l] if any(t.J(d, i) for i in chosen)) / l


def ef_p(t: RefTopic, docs: Sequence[str], l: int) -> float:
    return sum(1 for g in din_gains(t, docs)[:l] if g > 0) / l


def p_ia(t: RefTopic, docs: Sequence[str], k: int) -> float:
    return sum(t.w_hat(i) * sum(t.J(d, i) for d in docs[:k]) / k for i in t.rel_intents)


def s_rr(t: RefTopic, docs: Sequence[str], l: int | None = None) -> float:
    missing = set(t.rel_intents)
    for r, d in enumerate(docs if l is None else docs[:l], start=1):
        missing -= {i for i in t.intents if t.J(d, i)}
        if not missing:
            return 1.0 / r
    return 0.0


def alpha_dcg(t: RefTopic, docs: Sequence[str], k: int, alpha: float = 0.5) -> float:
    num = sum(n * _log_disc(r) for r, n in enumerate(novelty_gains(t, docs[:k], alpha), start=1))
    return num / sum((1.0 - alpha) ** (r - 1) * _log_disc(r) for r in range(1, k + 1))


def nnrbp(t: RefTopic, docs: Sequence[str], alpha: float = 0.5, beta: float = 0.5, graded: bool = False) -> float:
    return div(nrbp(t, docs, alpha, beta, graded), nrbp(t, greedy_ideal(t, alpha, graded), alpha, beta, graded))


def rbp_ia(t: RefTopic, docs: Sequence[str], l: int, p: float = 0.95) -> float:
    total = 0.0
    for i in t.rel_intents:
        big_g = max(t.intent_ideal(i))
        total += t.weights[i] * (1 - p) * sum(p ** (r - 1) * t.g(d, i) / big_g for r, d in enumerate(docs[:l], start=1))
    return total


def sharp(t: RefTopic, docs: Sequence[str], l: int, base: float, gamma: float = 0.5) -> float:
    return gamma * i_rec(t, docs, l) + (1.0 - gamma) * base


def _r_linear(t: RefTopic, d: str, a: str) -> float:
    gmax = max((t.g(x, a) for x in t.grades), default=0)
    return t.g(d, a) / gmax if gmax else 0.0


def eu(t: RefTopic, docs: Sequence[str], alpha: float = 0.5, e: float = 0.03, eu_discount: str = "1+log2(i)") -> float:
    total = 0.0
    counts = {a: 0 for a in t.intents}
    for i, d in enumerate(docs, start=1):
        disc = 1.0 / (1.0 + math.log2(i)) if eu_discount == "1+log2(i)" else 1.0 / math.log2(i + 1)
        value = sum(t.weights[a] * _r_linear(t, d, a) * (1.0 - alpha) ** counts[a] for a in t.intents)
        total += disc * (value - e)
        for a in t.intents:
            counts[a] += t.J(d, a)
    return total


def ct(t: RefTopic, docs: Sequence[str], k: int, alpha: float = 0.5, h_max: float = 1.0, ct_time: str = "per_rank") -> float:
    total = 0.0
    counts = {a: 0 for a in t.intents}
    filled = {a: 0.0 for a in t.intents}
    shown = docs[:k]
    for i, d in enumerate(shown, start=1):
        value = sum(t.weights[a] * _r_linear(t, d, a) * (1.0 - alpha) ** counts[a] * (1.0 if filled[a] < h_max else 0.0) for a in t.intents)
        total += value / i if ct_time == "per_rank" else value
        for a in t.intents:
            counts[a] += t.J(d, a)
            filled[a] += _r_linear(t, d, a)
    if ct_time == "total":
        return total / len(shown) if shown else 0.0
    return total


def alpha_sharp(
    t: RefTopic,
    docs: Sequence[str],
    k: int,
    avg: str = "micro",
    alpha: float = 0.3,
    lam: float = 0.5,
    disc: str = "dcg",
    beta: float = 0.8,
    eps: float = 1e-5,
    smr: dict[str, float] | None = None,
) -> float:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty with every subtopic averaging; ``smr`` = subtopic miss rates for ``avg="smr"``."""
    rel = t.rel_intents
    if avg == "cascade":
        gains = novelty_gains(t, docs[:k], alpha)
        ideal = novelty_gains(t, greedy_ideal(t, alpha)[:k], alpha)
        num = sum(_golbus_discount(disc, r, beta) * n for r, n in enumerate(gains, start=1))
        score = div(num, sum(_golbus_discount(disc, r, beta) * n for r, n in enumerate(ideal, start=1)))
    else:
        sub = {i: alpha_m_i(t, docs, i, k, alpha, disc, beta) for i in rel}
        if avg == "micro":
            score = sum(t.w_hat(i) * sub[i] for i in rel)
        elif avg == "geom":
            score = math.exp(sum(t.w_hat(i) * math.log(max(sub[i], eps)) for i in rel))
        else:
            assert smr is not None
            score = sum(smr[i] * sub[i] for i in rel)
    return lam * i_rec(t, docs, k) + (1.0 - lam) * score


def xi_smr_dd(t: RefTopic, offset: int = 0) -> tuple[int, dict[str, float], float]:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty: greedy cover size (ties: smallest docid), smr at depth xi, dd with exponent xi + offset."""
    rel = t.rel_intents
    r_t = [d for d in t.grades if any(t.J(d, i) for i in rel)]
    uncovered = set(rel)
    xi = 0
    while uncovered:
        best = max(sorted(r_t), key=lambda d: len({i for i in uncovered if t.J(d, i)}))  # first max = smallest
        uncovered -= {i for i in rel if t.J(best, i)}
        xi += 1
    miss = {i: 1.0 - len(t.relevant(i)) / len(r_t) for i in rel}
    total = sum(m**xi for m in miss.values())
    smr = {i: (miss[i] ** xi / total if total > 0 else 1.0 / len(rel)) for i in rel}
    d_mean = 1.0 - sum(m ** (xi + offset) for m in miss.values()) / len(rel)
    dd = 2 * d_mean / (1 + d_mean)
    return xi, smr, dd
