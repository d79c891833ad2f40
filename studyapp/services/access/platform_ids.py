"""Raw platform ids (a Prolific participant or submission id, an MTurk worker or assignment id): where the
database holds them, hiding them from staff without the id permission, and scrubbing them out.

:data:`ID_FIELDS` is the one list of model fields that hold raw ids. The admin refuses lookups, search,
ordering and filters that reach one of them for users who may not see every id
(:func:`touches_ids`); pages show text that may hold ids through :func:`mask`, which hides the ids of
the study's participants and anything shaped like a platform's id (:attr:`.Platform.raw_id_pattern`),
so masking still works once the participant is gone. Erasure and the retention purge call
:func:`scrub`, which rewrites the audit rows (models.PlatformCall) that name the person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from django.core.exceptions import FieldDoesNotExist
from django.db import models

from studyapp.models import Annotator, PlatformCall, Study

# model label -> the fields holding raw platform ids (the annotator's own, and the API calls' text).
ID_FIELDS: dict[str, tuple[str, ...]] = {
    "studyapp.Annotator": ("external_id", "external_ids"),
    "studyapp.PlatformCall": ("request", "response"),
}
HIDDEN = "(hidden)"
MIN_LENGTH = 4  # shorter values (a "1", an empty flag) are not ids worth hiding and would mask everything


def touches_ids(model: type[models.Model], path: str) -> bool:
    """Does the lookup, ordering or search path ``path`` (``annotator__external_id__startswith``,
    ``-external_id``, ``^external_id``) reach a field of :data:`ID_FIELDS` from ``model``?"""
    path = path.lstrip("-?^=@")
    for part in path.split("__"):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False  # a lookup or a transform: the path ended on a field that holds no id
        if part in ID_FIELDS.get(model._meta.label, ()):
            return True
        if not field.is_relation or field.related_model is None:
            return False
        model = field.related_model
    return False


def ids_of(annotator: Annotator) -> set[str]:
    """The raw ids ``annotator`` arrived with (platform id and every platform parameter)."""
    ids = {annotator.external_id, *(str(v) for v in (annotator.external_ids or {}).values())}
    return {i for i in ids if len(i) >= MIN_LENGTH}


def study_ids(study: Study, exclude: Iterable[int] = ()) -> set[str]:
    """Every raw id of ``study``'s annotators (but those of ``exclude``, primary keys)."""
    ids: set[str] = set()
    rows = Annotator.objects.filter(study=study).exclude(pk__in=list(exclude)).values_list("external_id", "external_ids")
    for external_id, external_ids in rows:
        ids.add(external_id)
        ids.update(str(v) for v in (external_ids or {}).values())
    return {i for i in ids if len(i) >= MIN_LENGTH}


def _id_shapes() -> re.Pattern[str] | None:
    from studyapp.services.platforms.registry import REGISTRY

    shapes = [p.raw_id_pattern for p in REGISTRY.values() if p.raw_id_pattern]
    return re.compile("|".join(f"(?:{s})" for s in shapes)) if shapes else None


def mask(study: Study, text: str, ids: set[str] | None = None) -> str:
    """``text`` with the raw ids of ``study``'s participants (``ids``: computed when None) and anything shaped
    like a platform id replaced by ``(hidden)``: an erased or purged participant's ids stay hidden too."""
    if not text:
        return text
    ids = study_ids(study) if ids is None else ids
    if ids:
        text = re.sub("|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True)), HIDDEN, text)
    shapes = _id_shapes()
    return shapes.sub(HIDDEN, text) if shapes is not None else text


def _replace(value: object, pattern: re.Pattern[str], replacements: Mapping[str, str]) -> object:
    """``value`` (a JSON value) with every id of ``pattern`` in its strings (keys too) replaced."""
    if isinstance(value, str):
        return pattern.sub(lambda m: replacements[m.group(0)], value)
    if isinstance(value, dict):
        return {_replace(k, pattern, replacements): _replace(v, pattern, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, pattern, replacements) for v in value]
    return value


def scrub(study: Study, replacements: Mapping[str, str]) -> int:
    """Replace each raw id (key) by its stand-in (value) in every audit row of ``study``; returns the rows changed.
    Called inside the transaction that erases or purges, so no row keeps an id the person no longer has."""
    replacements = {k: v for k, v in replacements.items() if len(k) >= MIN_LENGTH}
    if not replacements:
        return 0
    pattern = re.compile("|".join(re.escape(i) for i in sorted(replacements, key=len, reverse=True)))
    changed = []
    for call in PlatformCall.objects.filter(study=study).only("pk", "request", "response").iterator():
        request, response = _replace(call.request, pattern, replacements), _replace(call.response, pattern, replacements)
        if request != call.request or response != call.response:
            call.request, call.response = request, response
            changed.append(call)
    PlatformCall.objects.bulk_update(changed, ["request", "response"], batch_size=500)
    return len(changed)


def own_ids(annotators: list[Annotator], study: Study) -> set[str]:
    """The ids of ``annotators`` that no other annotator of ``study`` shares (a participant or submission id,
    not the platform's study id that every link carries)."""
    mine = set().union(*(ids_of(a) for a in annotators)) if annotators else set()
    return mine - study_ids(study, exclude=[a.pk for a in annotators])
