"""Progress of a study: presentations, answers, completeness, annotators and how many are still needed.

The JSON keys are documented in ``docs/studyapp.md`` (``study_status --format json``).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import Count, Q

from studyapp.models import Annotator, Assignment, Preference, Presentation, Study
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.models.study_settings import Allocation
from studyapp.services.clock import now_or
from studyapp.services.participation.allocation import Capacity, capacity
from studyapp.services.wording import count


def _level_key(kind: str, level: str) -> str:
    return "check" if kind != Presentation.Kind.PAIR else level


def unfillable_reason(study: Study, room: Capacity) -> str:
    """Why the unfillable slots of ``room`` fit no full quota ('' when there are none)."""
    if not room.unfillable_slots:
        return ""
    rules = "never the same presentation twice" + ("" if study.same_pair_both_levels else ", one level per topic and run pair")
    return (
        f"after {count(room.newcomers, 'more annotator')}, {count(room.unfillable_slots, 'open answer slot')} on "
        f"{count(room.unfillable_presentations, 'presentation')} fit no full quota: admission would find only {room.next_quota} of the {room.regular_quota} regular "
        f"items a newcomer needs ({rules}); newcomers are refused rather than given fewer items. To finish them, lower "
        f"items_per_annotator in the admin."
    )


def _per_presentation(qs, key: str) -> Counter:
    """Rows of ``qs`` counted per presentation id (``key`` names the presentation column)."""
    return Counter(dict(qs.order_by().values(key).annotate(n=Count("id")).values_list(key, "n")))


def _answers(study: Study, kinds: dict[int, str]) -> tuple[Counter, dict[str, int]]:
    """Valid answers per presentation, and the answer counts of the report (per level, late, from excluded)."""
    every = Preference.objects.filter(assignment__presentation__study=study)
    per_p = _per_presentation(every.exclude(assignment__annotator__status=Annotator.Status.EXCLUDED), "assignment__presentation_id")
    per_level = Counter()
    for pid, n in per_p.items():
        per_level[kinds[pid]] += n
    return per_p, {
        TOPIC: per_level[TOPIC],
        SUBTOPIC: per_level[SUBTOPIC],
        "check": per_level["check"],
        "total": sum(per_level.values()),
        "late": every.filter(late=True).count(),
        "from_excluded": every.filter(assignment__annotator__status=Annotator.Status.EXCLUDED).count(),
    }


def _slots(regular: list[int], answers: Counter, leases: Counter, k: int) -> dict[str, int]:
    """Answer slots of the regular presentations: needed, filled by answers, held by live leases, open."""
    filled = sum(min(answers[p], k) for p in regular)
    leased = sum(min(leases[p], max(0, k - answers[p])) for p in regular)
    return {"needed": len(regular) * k, "filled": filled, "leased": leased, "open": len(regular) * k - filled - leased}


def _annotators(study: Study, now: datetime) -> dict[str, int]:
    statuses = Counter(Annotator.objects.filter(study=study).values_list("status", flat=True))
    counts = {"total": sum(statuses.values())}
    for status in Annotator.Status:
        counts[status.value] = statuses[status]
        if status == Annotator.Status.ACTIVE:
            counts["active_now"] = Annotator.objects.filter(study=study).working(now).count()
    return counts


def _unfillable(study: Study, room: Capacity) -> dict[str, Any]:
    return {
        "annotators_needed": room.newcomers,
        "unfillable_slots": {
            TOPIC: room.unfillable.get(TOPIC, 0),
            SUBTOPIC: room.unfillable.get(SUBTOPIC, 0),
            "total": room.unfillable_slots,
            "presentations": room.unfillable_presentations,
        },
        "unfillable_reason": unfillable_reason(study, room),
    }


def study_status(study: Study, *, now: datetime | None = None, capacity_needed: bool = True) -> dict[str, Any]:
    """A JSON-ready progress report of ``study`` at ``now``.

    ``capacity_needed=False`` leaves out ``annotators_needed`` and the unfillable slots, which
    simulate admission (the expensive part) when a caller only needs the counts.
    """
    now = now_or(now)
    k = study.annotators_per_presentation
    rows = Presentation.objects.filter(study=study).values_list("id", "kind", "level")
    kinds = {pid: _level_key(kind, level) for pid, kind, level in rows}
    per_level = Counter(kinds.values())
    regular = [p for p, key in kinds.items() if key != "check"]
    answers, answer_counts = _answers(study, kinds)
    leases = _per_presentation(Assignment.objects.filter(presentation__study=study).live(now).valid(), "presentation_id")
    complete = Counter(kinds[p] for p in regular if answers[p] >= k)
    slots = _slots(regular, answers, leases, k)
    return {
        "study": study.name,
        "slug": study.slug,
        "status": study.status,
        "collection": study.collection.name,
        "now": now.isoformat(),
        "annotators_per_presentation": k,
        "items_per_annotator": study.items_per_annotator,
        "check_items_per_annotator": study.check_items_per_annotator,
        "presentations": {TOPIC: per_level[TOPIC], SUBTOPIC: per_level[SUBTOPIC], "check": per_level["check"], "total": len(kinds)},
        "answers": answer_counts,
        "complete": {TOPIC: complete[TOPIC], SUBTOPIC: complete[SUBTOPIC], "total": sum(complete.values())},
        "over_covered": sum(1 for p in regular if answers[p] > k),
        "slots": slots,
        "live_leases": sum(leases.values()),
        "annotators": _annotators(study, now),
        **(_unfillable(study, capacity(study, now=now)) if capacity_needed else {}),
        "progress": round(slots["filled"] / slots["needed"], 4) if regular else 1.0,
        "allocation": _allocation(study),
    }


def _allocation(study: Study) -> dict[str, Any]:
    """Which allocation runs; for an adaptive one the rounds drawn so far and whether the decided signal came."""
    if study.allocation != Allocation.ADAPTIVE:
        return {"kind": study.allocation}
    rounds = study.allocation_rounds.aggregate(drawn=Count("id"), decided=Count("id", filter=Q(decided=True)))
    return {"kind": study.allocation, "rounds": rounds["drawn"], "decided": bool(rounds["decided"])}


def render_text(report: dict[str, Any]) -> str:
    """The report as a few aligned lines for people."""
    p, a, c, s, n = report["presentations"], report["answers"], report["complete"], report["slots"], report["annotators"]
    lines = [
        f"Study {report['study']!r} ({report['status']}) on collection {report['collection']!r}, at {report['now']}",
        f"  link                 /s/{report['slug']}/",
        f"  presentations        topic {p['topic']}, subtopic {p['subtopic']}, check {p['check']}, total {p['total']}",
        f"  answers              topic {a['topic']}, subtopic {a['subtopic']}, check {a['check']}, total {a['total']}"
        f" (late {a['late']}, from excluded annotators {a['from_excluded']})",
        f"  complete (>= {report['annotators_per_presentation']})        topic {c['topic']}, subtopic {c['subtopic']}, total {c['total']};"
        f" over-covered {report['over_covered']}",
        f"  answer slots         needed {s['needed']}, filled {s['filled']}, leased {s['leased']}, open {s['open']}"
        f" ({report['progress']:.1%} filled)",
        f"  annotators           active {n['active']} (working now {n['active_now']}), finished {n['finished']},"
        f" refused {n['refused']}, excluded {n['excluded']}, screened out {n['screened']}, not started {n['new']}",
        f"  still needed         {report['annotators_needed']} annotators who get a full quota"
        f" ({count(report['items_per_annotator'], 'item')} each, {count(report['check_items_per_annotator'], 'check')})",
    ]
    m = report["allocation"]
    if m["kind"] == Allocation.ADAPTIVE:
        lines.append(
            f"  allocation           adaptive: {count(m['rounds'], 'round')} drawn, {'decided' if m['decided'] else 'not decided'}"
            + ("" if m["rounds"] else f"; run manage.py allocation_priorities {report['slug']} --every 30 beside the server")
        )
    else:
        lines.append(f"  allocation           {m['kind']}")
    u = report["unfillable_slots"]
    if u["total"]:
        lines.append(
            f"  unfillable           topic {u['topic']}, subtopic {u['subtopic']}, total {u['total']}: {report['unfillable_reason']}"
        )
    return "\n".join(lines)
