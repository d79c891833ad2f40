"""The bundled demo: import ``studyapp/demo`` as a collection, create its study and a staff login.

A second, small study (``studyapp/demo/simulated.json``) is created already completed: simulated
annotators (``services.rehearsal.simulation``) answered it through the real pages, following D#-nDCG@10 plus
noise, a tenth of them fast cheaters, so its study report is full at once.

Idempotent: whatever exists already is kept, so ``make run`` can call it every time. The staff
login is for the local demo only: with production settings (``STUDYAPP_PRODUCTION=1``) none is
created and a given password is refused; staff accounts come from ``manage.py createsuperuser`` then.
A given password must pass Django's password validators.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from studyapp.exceptions import StudyError
from studyapp.models import Collection, Study
from studyapp.services.access.teams import set_team
from studyapp.services.collections.bare_documents import MAX_BARE_SHARE
from studyapp.services.collections.importing import import_collection
from studyapp.services.design.study_config import read_config
from studyapp.services.design.study_design import create_study
from studyapp.services.participation.allocation import capacity
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
COLLECTION = "demo"
STUDY = "Demo study"
SIMULATED_STUDY = "Demo study (simulated)"
SIMULATION = Plan(truth="D#-nDCG@10", noise=0.5, fast_share=0.1, seed=2026)
TAIL_ROUNDS = 4  # simulations, each after lowering the quota for the slots no full quota fits
STAFF_USER = "staff"
RUNS = ("demo-diversity", "demo-mixed", "demo-random", "demo-relevance", "demo-weak")


@dataclass
class DemoResult:
    study: Study
    collection_created: bool
    study_created: bool
    staff_username: str
    staff_password: str | None  # None: the user existed and the password was left alone (or production)
    notes: list[str] = field(default_factory=list)
    simulated: Study | None = None
    simulated_created: bool = False


def load_demo(*, staff_password: str | None = None, simulated: bool = False) -> DemoResult:
    """Import the demo collection and create the demo study and staff user when missing; with
    ``simulated``, also the completed simulated study (``make run`` asks for it; about 20 s once)."""
    if staff_password and not settings.STUDYAPP_DEMO_STAFF:
        raise StudyError("production settings refuse a demo staff password; create staff accounts with `manage.py createsuperuser`")
    if staff_password:
        try:
            validate_password(staff_password)
        except ValidationError as exc:
            raise StudyError("the staff password is too weak: " + " ".join(exc.messages)) from None
    notes: list[str] = []
    collection_created = not Collection.objects.filter(name=COLLECTION).exists()
    if collection_created:
        summary = import_collection(
            COLLECTION,
            qrels=DEMO_DIR / "qrels.txt",
            intents=DEMO_DIR / "intents.tsv",
            topics=DEMO_DIR / "topics.xml",
            docs=DEMO_DIR / "docs.jsonl",
            runs=[DEMO_DIR / "runs" / f"{name}.run" for name in RUNS],
            description="Invented demo data written for this project (see studyapp/demo/README.md).",
        )
        notes += summary.lines()
    study = Study.objects.filter(name=STUDY).first()
    study_created = study is None
    if study is None:
        design = create_study(COLLECTION, STUDY, read_config(DEMO_DIR / "study.json"), max_bare_share=MAX_BARE_SHARE)
        study = design.study
        notes += design.lines()[:-1]
    simulated_study, simulated_created = _simulated_study(notes) if simulated else (None, False)
    if not settings.STUDYAPP_DEMO_STAFF:
        return DemoResult(study, collection_created, study_created, "", None, notes, simulated_study, simulated_created)
    User = get_user_model()
    with transaction.atomic():
        user = User.objects.filter(username=STAFF_USER).first()
        password = staff_password
        if user is None:
            password = password or secrets.token_urlsafe(9)
            User.objects.create_superuser(username=STAFF_USER, email="", password=password)
        elif password:
            user.set_password(password)
            user.is_staff = user.is_superuser = user.is_active = True
            user.save()
        for owned in (study, simulated_study):
            if owned is not None and not owned.members.exists():
                set_team(owned, STAFF_USER, platform_ids=[STAFF_USER])  # the demo staff user owns the demo studies
    return DemoResult(study, collection_created, study_created, STAFF_USER, password, notes, simulated_study, simulated_created)


def _simulated_study(notes: list[str]) -> tuple[Study, bool]:
    """The completed simulated study: created and answered in one transaction (all or nothing)."""
    study = Study.objects.filter(name=SIMULATED_STUDY).first()
    if study is not None:
        return study, False
    with transaction.atomic():
        study = create_study(COLLECTION, SIMULATED_STUDY, read_config(DEMO_DIR / "simulated.json")).study
        items_per_annotator = study.items_per_annotator
        for attempt in range(TAIL_ROUNDS):
            notes += simulate_annotators(study, replace(SIMULATION, seed=SIMULATION.seed + attempt)).lines()
            if not _smaller_quota_for_the_tail(study):
                break
        # The smaller tail quotas were for the last few arrivals only: the closed study states the setting
        # nearly everybody worked under (the pages and the report count each annotator's own items).
        study.items_per_annotator = items_per_annotator
        study.status = Study.Status.CLOSED
        study.save(update_fields=["status", "items_per_annotator"])
    return study, True


def _smaller_quota_for_the_tail(study: Study) -> bool:
    """What staff do when the last answer slots fit no full quota (docs/studyapp.md "The tail"):
    lower ``items_per_annotator`` to what admission can still give. False when nothing is left."""
    room = capacity(study)
    if not room.unfillable_slots or room.next_quota < 1:
        return False
    items = room.next_quota + study.check_items_per_annotator
    while items > 1 and Study(items_per_annotator=items, check_share=study.check_share).regular_items_per_annotator > room.next_quota:
        items -= 1
    study.items_per_annotator = items
    study.save(update_fields=["items_per_annotator"])
    return True
