"""Create a study: check a configuration against a collection, then write the design in one transaction.

Presentations: every canonical run pair (run_a < run_b by name) x every chosen topic x (one
topic-level presentation + one per kept subtopic at subtopic level), plus check items when
``check_share`` > 0. Topic selection follows Chen et al. when a ``topic_rule`` is given: the
``count`` topics with the fewest subtopics but at least ``min_subtopics`` (ties: collection order).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations

from django.conf import settings
from django.db import transaction
from django.utils import translation
from django.utils.functional import Promise
from django.utils.text import slugify

from studyapp.exceptions import InvalidStudyConfig, TooManyBareDocuments
from studyapp.models import (
    Collection,
    Judgment,
    Presentation,
    RankedItem,
    Run,
    Study,
    StudyRun,
    StudySubtopic,
    StudyTopic,
    Subtopic,
    Topic,
    study_settings,
)
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.services.collections.bare_documents import BareDocuments, bare_documents
from studyapp.services.collections.planner_stats import refresh_statistics
from studyapp.services.design.check_items import CheckPlan, plan_checks
from studyapp.services.design.readiness import consent_warnings, link_warnings
from studyapp.services.design.study_config import StudyConfig, parse_config, unknown_names
from studyapp.services.participation.allocation import capacity
from studyapp.services.wording import count

NAME_MAX = Study._meta.get_field("name").max_length


@dataclass
class DesignSummary:
    """Exact counts of what ``create_study`` wrote (shown by the command and the admin)."""

    study: Study
    runs: int
    run_pairs: int
    topics: int
    kept_subtopics: int
    presentations: dict[str, int] = field(default_factory=dict)  # topic, subtopic, check, total
    annotators_needed: int = 0  # newcomers admission gives a full quota (see allocation.capacity)
    unfillable_slots: int = 0  # answer slots no full quota can hold
    bare: BareDocuments | None = None  # documents the study shows without display data
    left_out: list[str] = field(default_factory=list)  # the collection's topics left out by default, with the reason

    def lines(self, base_url: str = "") -> list[str]:
        """What was written, for people; then the annotator link, absolute on ``base_url`` (else
        ``STUDYAPP_BASE_URL``; without either, the site's path and how to get the absolute link: never a
        guessed host or port), and what would keep participants from using it (:func:`link_warnings`)."""
        p = self.presentations
        base = (base_url or settings.STUDYAPP_BASE_URL).rstrip("/")
        return [
            f"Created study {self.study.name!r} (slug {self.study.slug}) on collection {self.study.collection.name!r}.",
            f"{self.runs} runs -> {self.run_pairs} run pairs; {self.topics} topics; {self.kept_subtopics} kept subtopics.",
            *([f"Left out {count(len(self.left_out), 'topic')} of the collection: {', '.join(self.left_out)}."] if self.left_out else []),
            f"Presentations: {p['topic']} topic-level + {p['subtopic']} subtopic-level = {p['topic'] + p['subtopic']}; "
            f"{p['check']} check items; {p['total']} in all.",
            f"Each presentation wants {self.study.annotators_per_presentation} answers; each annotator answers "
            f"{count(self.study.items_per_annotator, 'item')} ({count(self.study.check_items_per_annotator, 'check')}): "
            f"{self.annotators_needed} annotators are needed"
            + (
                f"; {self.unfillable_slots} answer slots then fit no full quota and stay open (see study_status)."
                if self.unfillable_slots
                else "."
            ),
            *([self.bare.line()] if self.bare is not None else []),
            f"Annotator link: {base}/s/{self.study.slug}/ (what to paste into Prolific or MTurk: {base}/staff/{self.study.slug}/setup/)",
            *(
                ["  (paths on your site: give --base-url or set STUDYAPP_BASE_URL, e.g. https://study.example.org, for absolute links)"]
                if not base
                else [f"  Warning: {warning}" for warning in link_warnings(base)]
            ),
            *(f"Warning: {warning}" for warning in consent_warnings(self.study.consent_text)),
        ]


@dataclass
class _Plan:
    collection: Collection
    runs: list[Run]
    topics: list[Topic]
    kept: dict[int, list[tuple[Subtopic, float]]]  # topic pk -> (subtopic, renormalised weight), heaviest first
    checks: list[CheckPlan]
    left_out: list[str] = field(default_factory=list)  # the collection's topics not chosen by default, with the reason


def _choose_topics(
    config: StudyConfig, collection: Collection, runs: list[Run], errors: list[str], left_out: list[str] | None = None
) -> list[Topic]:
    """The study's topics; ``left_out`` gets, when neither ``topics`` nor ``topic_rule`` chooses them, each
    topic of the collection left out and why."""
    topics = {t.topic_id: t for t in Topic.objects.filter(collection=collection).order_by("position")}
    n_subtopics = _subtopic_counts(collection)
    covered: dict[str, set[str]] = defaultdict(set)
    for run_name, tid in RankedItem.objects.filter(run__in=runs).values_list("run__name", "topic__topic_id").distinct().order_by():
        covered[tid].add(run_name)
    names = {r.name for r in runs}
    full = [tid for tid in topics if covered[tid] >= names and n_subtopics.get(tid, 0) >= 1]
    if config.topics is not None:
        for tid in config.topics:
            missing = sorted(names - covered[tid])
            if missing:
                errors.append(f"topic {tid} has no ranked list in {'run' if len(missing) == 1 else 'runs'} {', '.join(missing)}")
            if n_subtopics.get(tid, 0) == 0:
                errors.append(f"topic {tid} has no subtopics")
        return [topics[t] for t in config.topics]
    if config.topic_rule is not None:
        count, least = config.topic_rule["count"], config.topic_rule["min_subtopics"]
        eligible = [tid for tid in full if n_subtopics[tid] >= least]
        if len(eligible) < count:
            errors.append(
                f"topic_rule asks for {count} topics but only {len(eligible)} have at least {least} subtopics "
                "and a ranked list in every chosen run"
            )
            return []
        position = {tid: n for n, tid in enumerate(topics)}
        chosen = sorted(eligible, key=lambda tid: (n_subtopics[tid], position[tid]))[:count]
        return [topics[t] for t in sorted(chosen, key=position.__getitem__)]
    if not full:
        errors.append("no topic has a ranked list in every chosen run")
    if left_out is not None:
        chosen = set(full)
        for tid in (t for t in topics if t not in chosen):  # in collection order
            missing = sorted(names - covered[tid])
            why = f"no ranked list in {'run' if len(missing) == 1 else 'runs'} {', '.join(missing)}" if missing else "no subtopics"
            left_out.append(f"{tid} ({why})")
    return [topics[t] for t in full]


def _subtopic_counts(collection: Collection) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for tid in Subtopic.objects.filter(topic__collection=collection).values_list("topic__topic_id", flat=True):
        counts[tid] += 1
    return counts


def _keep_subtopics(collection: Collection, topics: list[Topic], k: int) -> dict[int, list[tuple[Subtopic, float]]]:
    """Top-k subtopics by weight, renormalised, by the evaluation package's own rule (docs/metrics.md#intents-and-weights)."""
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.collections.evaluation_bridge import to_evaluation_collection

    kept_collection = to_evaluation_collection(collection, [t.topic_id for t in topics]).keep_top_intents(k)
    rows = {(s.topic_id, s.number): s for s in Subtopic.objects.filter(topic__in=topics)}
    kept: dict[int, list[tuple[Subtopic, float]]] = {}
    for topic in topics:
        intents = kept_collection.topics[topic.topic_id].intents
        order = {i.id: n for n, i in enumerate(intents)}
        heaviest_first = sorted(intents, key=lambda i: (-(i.weight or 0.0), order[i.id]))
        kept[topic.pk] = [(rows[topic.pk, i.id], float(i.weight or 0.0)) for i in heaviest_first]
    return kept


Kept = dict[int, list[tuple[Subtopic, float]]]  # topic pk -> (subtopic, renormalised weight), heaviest first


def _plan_checks(config: StudyConfig, runs: list[Run], topics: list[Topic], kept: Kept) -> list[CheckPlan]:
    lists: dict[tuple[int, int], list[int]] = defaultdict(list)
    for run_id, topic_id, doc_id in (
        RankedItem.objects.filter(run__in=runs, topic__in=topics)
        .order_by("run_id", "topic_id", "rank")
        .values_list("run_id", "topic_id", "document_id")
    ):
        lists[run_id, topic_id].append(doc_id)
    # What is shown decides what is relevant: all kept subtopics (topic level) or the heaviest one.
    shown = {t.pk: [s.pk for s, _ in (kept[t.pk] if TOPIC in config.levels else kept[t.pk][:1])] for t in topics}
    relevant: dict[int, set[int]] = defaultdict(set)
    judged: dict[int, set[int]] = defaultdict(set)
    for topic_id, sub_id, doc_id, grade in Judgment.objects.filter(topic__in=topics).values_list(
        "topic_id", "subtopic_id", "document_id", "grade"
    ):
        judged[topic_id].add(doc_id)
        if grade >= 1 and sub_id in shown[topic_id]:
            relevant[topic_id].add(doc_id)
    nonrelevant = {t.pk: sorted(judged[t.pk] - relevant[t.pk]) for t in topics}
    return plan_checks([t.pk for t in topics], [r.pk for r in runs], lists, config.depth, relevant, nonrelevant)


def _max_items_per_annotator(config: StudyConfig, n_pairs: int, kept: Kept) -> int:
    """How many distinct regular presentations one annotator may see under the level exclusion."""
    total = 0
    for subs in kept.values():
        topic_level = 1 if TOPIC in config.levels else 0
        sub_level = len(subs) if SUBTOPIC in config.levels else 0
        total += (topic_level + sub_level) if config.same_pair_both_levels else max(topic_level, sub_level)
    return total * n_pairs


def validate(collection_name: str, name: str, config: StudyConfig) -> _Plan:
    """Every check against the database; raises :class:`InvalidStudyConfig` listing all problems."""
    errors = study_name_problems(name) + name_problems(collection_name, config.runs, config.topics or [])
    if errors:
        raise InvalidStudyConfig(errors)
    collection = Collection.objects.get(name=collection_name)
    runs_by_name = {r.name: r for r in Run.objects.filter(collection=collection)}
    runs = sorted((runs_by_name[r] for r in config.runs), key=lambda r: r.name)
    left_out: list[str] = []
    topics = _choose_topics(config, collection, runs, errors, left_out)
    if errors:
        raise InvalidStudyConfig(errors)
    kept = _keep_subtopics(collection, topics, config.subtopics_per_topic)
    n_pairs = len(runs) * (len(runs) - 1) // 2
    quota = config.items_per_annotator
    n_checks = _checks_per_annotator(quota, config.check_share)
    regular = quota - n_checks
    if regular < 1:
        errors.append(f"check_share {config.check_share} leaves no regular items out of items_per_annotator {quota}")
    most = _max_items_per_annotator(config, n_pairs, kept)
    if regular > most:
        rule = "" if config.same_pair_both_levels else " (one annotator never sees the same topic and run pair at both levels)"
        errors.append(f"items_per_annotator asks for {regular} regular items but one annotator can see at most {most}{rule}")
    checks = _plan_checks(config, runs, topics, kept) if n_checks else []
    if n_checks > len(checks):
        errors.append(f"{n_checks} check items per annotator are needed but only {len(checks)} check items can be built; lower check_share")
    if errors:
        raise InvalidStudyConfig(errors)
    return _Plan(collection, runs, topics, kept, checks, left_out)


def study_name_problems(name: str) -> list[str]:
    """What keeps ``name`` from naming a new study: empty, too long, taken, or its URL slug taken."""
    name = (name or "").strip()
    if not name:
        return ["the study needs a non-empty name"]
    if len(name) > NAME_MAX:
        return [f"the study name is longer than {NAME_MAX} characters"]
    if Study.objects.filter(name=name).exists():
        return [f"a study named {name!r} exists already"]
    if Study.objects.filter(slug=study_slug(name)).exists():
        return [f"another study already uses the URL slug {study_slug(name)!r}; choose another name"]
    return []


def name_problems(collection_name: str, runs: list[str], topics: list[str]) -> list[str]:
    """The collection, run and topic names a configuration gives that the database does not hold, each
    with the closest existing name (:func:`unknown_names`)."""
    collection = Collection.objects.filter(name=collection_name).first()
    if collection is None:
        return [p.replace("unknown collection", "no collection named", 1) for p in
                unknown_names("collection", [collection_name], Collection.objects.values_list("name", flat=True))]  # fmt: skip
    where = f" in collection {collection.name!r}"
    problems = unknown_names("run", runs, Run.objects.filter(collection=collection).values_list("name", flat=True), where)
    return problems + unknown_names("topic", topics, Topic.objects.filter(collection=collection).values_list("topic_id", flat=True), where)


def config_problems(collection_name: str, name: str, raw: object) -> list[str]:
    """Every problem of a configuration for a new study at once (the command and the admin's form show
    them together): its keys and values, and the names it gives checked against the database, each
    misspelt key or name with the closest known one."""
    try:
        config = parse_config(raw)
    except InvalidStudyConfig as exc:
        lists = {key: [str(v) for v in raw.get(key) or []] if isinstance(raw, dict) and isinstance(raw.get(key), list) else []
                 for key in ("runs", "topics")}  # fmt: skip
        return list(exc.errors) + study_name_problems(name) + name_problems(collection_name, lists["runs"], lists["topics"])
    try:
        validate(collection_name, name, config)
    except InvalidStudyConfig as exc:
        return list(exc.errors)
    return []


def _checks_per_annotator(quota: int, share: float) -> int:
    return Study(items_per_annotator=quota, check_share=share).check_items_per_annotator


def study_slug(name: str) -> str:
    """The URL slug of a study name: Django's ASCII slug, or for a name without Latin letters or digits
    (e.g. Chinese or Japanese) ``study-`` and 8 hex digits of the name's SHA-256, stable and
    transliteration-free (a transliteration would guess a reading, and links stay ASCII)."""
    name = name.strip()
    return slugify(name) or f"study-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def create_study(collection_name: str, name: str, config: StudyConfig, *, max_bare_share: float | None = None) -> DesignSummary:
    """Validate, then write the study, its runs, topics, kept subtopics and presentations atomically.

    Default consent and instruction texts are stored in the study's language. With ``max_bare_share``,
    a study whose shown documents (ranked within its depth) lack display data in a larger share is
    refused (:class:`TooManyBareDocuments`) before anything is written."""
    plan = validate(collection_name, name, config)
    bare = bare_documents(collection_name, [r.pk for r in plan.runs], [t.pk for t in plan.topics], config.depth)
    if max_bare_share is not None and bare.share > max_bare_share:
        raise TooManyBareDocuments(
            f"refused: {bare.bare} of the {bare.shown} documents the study would show ({bare.share:.0%}, more than the allowed "
            f"{max_bare_share:.0%}) have no display data (no title, text or snippet) and would show as bare ids. "
            f"Add display data with: manage.py import_documents {collection_name} SOURCE... (WARC files, a folder of HTML "
            "files or JSONL), or create the study anyway with --allow-bare-documents (or allow more with --max-bare-share)."
        )
    name = name.strip()
    config = in_language(config)
    with transaction.atomic():
        study = Study.objects.create(
            name=name,
            slug=study_slug(name),
            collection=plan.collection,
            levels=config.levels_field,
            **setting_columns(config),
            config=json.loads(json.dumps(asdict(config), default=str)),  # amounts (Decimal) as text: "1.50"
        )
        StudyRun.objects.bulk_create([StudyRun(study=study, run=r) for r in plan.runs])
        study_topics = StudyTopic.objects.bulk_create([StudyTopic(study=study, topic=t, position=n) for n, t in enumerate(plan.topics)])
        StudySubtopic.objects.bulk_create(
            [
                StudySubtopic(study_topic=st, subtopic=sub, weight=weight, position=n)
                for st in study_topics
                for n, (sub, weight) in enumerate(plan.kept[st.topic_id])
            ]
        )
        presentations = list(_pair_presentations(study, config, plan))
        presentations += [_check_presentation(study, config, plan, c) for c in plan.checks]
        Presentation.objects.bulk_create(presentations, batch_size=2000)
    refresh_statistics(StudyRun, StudyTopic, StudySubtopic, Presentation)
    counts = {
        "topic": sum(1 for p in presentations if p.kind == Presentation.Kind.PAIR and p.level == TOPIC),
        "subtopic": sum(1 for p in presentations if p.kind == Presentation.Kind.PAIR and p.level == SUBTOPIC),
        "check": sum(1 for p in presentations if p.kind != Presentation.Kind.PAIR),
        "total": len(presentations),
    }
    room = capacity(study)
    return DesignSummary(
        study=study,
        runs=len(plan.runs),
        run_pairs=len(plan.runs) * (len(plan.runs) - 1) // 2,
        topics=len(plan.topics),
        kept_subtopics=sum(len(v) for v in plan.kept.values()),
        presentations=counts,
        annotators_needed=room.newcomers,
        unfillable_slots=room.unfillable_slots,
        bare=bare,
        left_out=plan.left_out,
    )


def in_language(config: StudyConfig) -> StudyConfig:
    """``config`` with its texts marked for translation (the default consent and instructions) in the study's language."""
    with translation.override(config.language):
        texts = {s.name: str(value) for s in study_settings.SETTINGS if isinstance(value := getattr(config, s.name), Promise)}
    return replace(config, **texts)


def setting_columns(config: StudyConfig) -> dict[str, object]:
    """The value of every declared setting's ``Study`` column for ``config`` (``study_settings.SETTINGS``, read when
    called): the configuration's value, except that without a completion code or a redirect a random code is
    made (annotators would finish with nothing to show for it)."""
    columns = {s.name: getattr(config, s.name) for s in study_settings.SETTINGS}
    if not columns["completion_code"] and not columns["redirect_url"]:
        columns["completion_code"] = secrets.token_hex(4).upper()
    return columns


def _pair_presentations(study: Study, config: StudyConfig, plan: _Plan):
    for run_a, run_b in combinations(plan.runs, 2):  # runs are sorted by name: run_a < run_b
        for topic in plan.topics:
            if TOPIC in config.levels:
                yield Presentation(study=study, kind=Presentation.Kind.PAIR, level=TOPIC, topic=topic, run_a=run_a, run_b=run_b)
            if SUBTOPIC in config.levels:
                for sub, _ in plan.kept[topic.pk]:
                    yield Presentation(
                        study=study, kind=Presentation.Kind.PAIR, level=SUBTOPIC, topic=topic, subtopic=sub, run_a=run_a, run_b=run_b
                    )


def _check_presentation(study: Study, config: StudyConfig, plan: _Plan, check: CheckPlan) -> Presentation:
    level = TOPIC if TOPIC in config.levels else SUBTOPIC
    subtopic = plan.kept[check.topic][0][0] if level == SUBTOPIC else None
    degraded = check.kind == Presentation.Kind.DEGRADED
    return Presentation(
        study=study,
        kind=check.kind,
        level=level,
        topic_id=check.topic,
        subtopic=subtopic,
        run_a_id=check.run,
        run_b_id=check.run,
        b_documents=list(check.b_documents) if degraded else [],
        expected_sign=-1 if degraded else 0,
    )
