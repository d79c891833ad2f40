"""The bundled demo: import ``studyapp/demo`` as a collection, create its study and a staff login.

Idempotent: whatever exists already is kept, so ``make run`` can call it every time. The staff
login is for the local demo only: with production settings (``STUDYAPP_PRODUCTION=1``) none is
created and a given password is refused; staff accounts come from ``manage.py createsuperuser`` then.
A given password must pass Django's password validators.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from studyapp.exceptions import StudyError
from studyapp.models import Collection, Study
from studyapp.services.importing import import_collection
from studyapp.services.study_config import read_config
from studyapp.services.study_design import create_study

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
COLLECTION = "demo"
STUDY = "Demo study"
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


def load_demo(*, staff_password: str | None = None) -> DemoResult:
    """Import the demo collection and create the demo study and staff user when missing."""
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
        design = create_study(COLLECTION, STUDY, read_config(DEMO_DIR / "study.json"))
        study = design.study
        notes += design.lines()[:-1]
    if not settings.STUDYAPP_DEMO_STAFF:
        return DemoResult(study, collection_created, study_created, "", None, notes)
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
    return DemoResult(study, collection_created, study_created, STAFF_USER, password, notes)
