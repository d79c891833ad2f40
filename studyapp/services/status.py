"""Progress of a study: presentations, answers, completeness, annotators and how many are still needed.

The JSON keys are documented in ``docs/studyapp.md`` (``study_status --format json``).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import Count
from django.utils import timezone

from studyapp.models import Annotator, Assignment, Preference, Presentation, Study
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.services.assignment import Capacity, capacity


def _level_key(kind: str, level: str) -> str:
    return "check" if kind != Presentation.PAIR else level


def unfillable_reason(study: Study, room: Capacity) -> str:
    """Why the unfillable slots of ``room`` fit no full quota ('' when there are none)."""
    if not room.unfillable_slots:
        return ""
    rules = "never the same presentation twice" + ("" if study.same_pair_both_levels else ", one level per topic and run pair")
    return (
        f"after {room.newcomers} more annotator(s), {room.unfillable_slots} open answer slot(s) on {room.unfillable_presentations} "
        f"presentation(s) fit no full quota: admission would find only {room.next_quota} of the {room.regular_quota} regular "
        f"items a newcomer needs ({rules}); newcomers are refused rather than given fewer items. To finish them, lower "
        f"items_per_annotator in the admin."
    )


def study_status(study: Study, *, now: datetime | None = None) -> dict[str, Any]:
    """A JSON-ready progress report of ``study`` at ``now``."""
    now = now or timezone.now()
    k = study.annotators_per_presentation
    presentations = {
        p: _level_key(kind, level) for p, kind, level in Presentation.objects.filter(study=study).values_list("id", "kind", "level")
    }
    per_level = Counter(presentations.values())

    valid = Preference.objects.filter(assignment__presentation__study=study).exclude(assignment__annotator__status=Annotator.EXCLUDED)
    answers_per_p = Counter(
        dict(valid.order_by().values("assignment__presentation_id").annotate(n=Count("id")).values_list("assignment__presentation_id", "n"))
    )
    answers = Counter()
    for pid, n in answers_per_p.items():
        answers[presentations[pid]] += n
    all_prefs = Preference.objects.filter(assignment__presentation__study=study)
    live = Assignment.objects.filter(
        presentation__study=study, preference__isnull=True, released_at__isnull=True, lease_expires_at__gt=now
    ).exclude(annotator__status=Annotator.EXCLUDED)
    leases_per_p = Counter(dict(live.order_by().values("presentation_id").annotate(n=Count("id")).values_list("presentation_id", "n")))

    regular = [p for p, key in presentations.items() if key != "check"]
    complete = Counter(presentations[p] for p in regular if answers_per_p[p] >= k)
    filled = sum(min(answers_per_p[p], k) for p in regular)
    leased = sum(min(leases_per_p[p], max(0, k - answers_per_p[p])) for p in regular)
    open_slots = len(regular) * k - filled - leased
    room = capacity(study, now=now)

    statuses = Counter(Annotator.objects.filter(study=study).values_list("status", flat=True))
    active_live = (
        Annotator.objects.filter(
            study=study,
            status=Annotator.ACTIVE,
            assignments__lease_expires_at__gt=now,
            assignments__released_at__isnull=True,
            assignments__preference__isnull=True,
        )
        .distinct()
        .count()
    )
    return {
        "study": study.name,
        "slug": study.slug,
        "status": study.status,
        "collection": study.collection.name,
        "now": now.isoformat(),
        "annotators_per_presentation": k,
        "items_per_annotator": study.items_per_annotator,
        "check_items_per_annotator": study.check_items_per_annotator,
        "presentations": {TOPIC: per_level[TOPIC], SUBTOPIC: per_level[SUBTOPIC], "check": per_level["check"], "total": len(presentations)},
        "answers": {
            TOPIC: answers[TOPIC],
            SUBTOPIC: answers[SUBTOPIC],
            "check": answers["check"],
            "total": sum(answers.values()),
            "late": all_prefs.filter(late=True).count(),
            "from_excluded": all_prefs.filter(assignment__annotator__status=Annotator.EXCLUDED).count(),
        },
        "complete": {TOPIC: complete[TOPIC], SUBTOPIC: complete[SUBTOPIC], "total": sum(complete.values())},
        "over_covered": sum(1 for p in regular if answers_per_p[p] > k),
        "slots": {"needed": len(regular) * k, "filled": filled, "leased": leased, "open": open_slots},
        "live_leases": sum(leases_per_p.values()),
        "annotators": {
            "total": sum(statuses.values()),
            "new": statuses[Annotator.NEW],
            "active": statuses[Annotator.ACTIVE],
            "active_now": active_live,
            "finished": statuses[Annotator.FINISHED],
            "refused": statuses[Annotator.REFUSED],
            "excluded": statuses[Annotator.EXCLUDED],
            "screened": statuses[Annotator.SCREENED],
        },
        "annotators_needed": room.newcomers,
        "unfillable_slots": {
            TOPIC: room.unfillable.get(TOPIC, 0),
            SUBTOPIC: room.unfillable.get(SUBTOPIC, 0),
            "total": room.unfillable_slots,
            "presentations": room.unfillable_presentations,
        },
        "unfillable_reason": unfillable_reason(study, room),
        "progress": round(filled / (len(regular) * k), 4) if regular else 1.0,
    }


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
        f" ({report['items_per_annotator']} items each, {report['check_items_per_annotator']} checks)",
    ]
    u = report["unfillable_slots"]
    if u["total"]:
        lines.append(
            f"  unfillable           topic {u['topic']}, subtopic {u['subtopic']}, total {u['total']}: {report['unfillable_reason']}"
        )
    return "\n".join(lines)
