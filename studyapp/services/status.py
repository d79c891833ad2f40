"""Progress of a study: presentations, answers, completeness, annotators and how many are still needed.

The JSON keys are documented in ``docs/studyapp.md`` (``study_status --format json``).
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import Count
from django.utils import timezone

from studyapp.models import Annotator, Assignment, Preference, Presentation, Study
from studyapp.models.study import SUBTOPIC, TOPIC


def _level_key(kind: str, level: str) -> str:
    return "check" if kind != Presentation.PAIR else level


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
    quota = study.regular_items_per_annotator

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
        "annotators_needed": math.ceil(open_slots / quota) if quota else 0,
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
        f"  still needed         about {report['annotators_needed']} annotators"
        f" ({report['items_per_annotator']} items each, {report['check_items_per_annotator']} checks)",
    ]
    return "\n".join(lines)
