"""Annotator pseudonyms for exported data: keyed hashes, stable within a study, unlinkable across studies.

``pseudonym = "P" + HMAC-SHA256(study.pseudonym_secret, identity)[:16 hex digits]`` where the
identity is the platform and the platform's participant id (``prolific:5f3c...``) or, for an
annotator without one, the annotator's database id. Each study has its own random key, so the
same participant gets the same pseudonym in every export of a study and different, unlinkable
pseudonyms in different studies; without the key a pseudonym cannot be traced back to the
platform id (docs/data-dictionary.md#pseudonyms).
"""

from __future__ import annotations

import hashlib
import hmac

from studyapp.models import Annotator, Study

DIGITS = 16  # 64 bits: collisions are negligible for any study size


def identity(annotator: Annotator) -> str:
    """What the pseudonym is computed from: the platform identity, else the database id."""
    if annotator.external_id:
        return f"{annotator.platform or 'link'}:{annotator.external_id}"
    return f"annotator:{annotator.pk}"


def pseudonym(study: Study, annotator: Annotator) -> str:
    """The export pseudonym of ``annotator`` in ``study`` (the one kept when its platform id was purged)."""
    if annotator.kept_pseudonym:
        return annotator.kept_pseudonym
    digest = hmac.new(study.pseudonym_secret.encode(), identity(annotator).encode(), hashlib.sha256).hexdigest()
    return "P" + digest[:DIGITS]
