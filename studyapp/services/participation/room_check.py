"""The room check before consent, answered from a recent look while a study has plenty of room.

The entry page asks whether admission would find a full quota for a newcomer
(``allocation.newcomer_room``: one aggregate over the study's assignments). On TREC 2014's 3,976
presentations that query took 12-20 ms of the database's time per arrival once a burst of 200
newcomers held items: the largest database cost of a whole session (docs/benchmarks.md, "Server
CPU per request"). The check is advisory: admission at consent locks and decides, and refuses a
newcomer the study has no room for any more, whatever the entry page said.

A server process therefore keeps a positive answer for ``STUDYAPP_ROOM_CHECK_SECONDS`` (2; 0 = ask
the database on every arrival), and only while that answer showed room for at least
:data:`REUSE_NEWCOMERS` more newcomers, counting down the newcomers this process let through since.
Room only shrinks by admissions (each takes one quota: ``regular`` falls by at most the quota per
admission; expiring leases give room back), so near the end of a study, and after the time is up,
every arrival asks the database again. A negative answer is never kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings

from studyapp.models import Study
from studyapp.services.participation import allocation

REUSE_NEWCOMERS = 20  # a kept answer must show room for this many newcomers beyond the ones let through since


@dataclass
class _Look:
    key: tuple
    until: float  # time.monotonic() after which the database is asked again
    spare: int  # newcomers the look showed room for, less those let through since


_looks: dict[int, _Look] = {}  # study pk -> this process's last positive look


def _key(study: Study) -> tuple:
    """What the answer depends on besides the assignments (a study row reused under the same pk is another key)."""
    return (
        study.pseudonym_secret,
        study.items_per_annotator,
        study.check_share,
        study.annotators_per_presentation,
        study.same_pair_both_levels,
    )


def has_room(study: Study) -> bool:
    """Would admission find a full quota for a newcomer now? From this process's recent look when it
    showed ample room, else from the database (``allocation.newcomer_room``)."""
    seconds = settings.STUDYAPP_ROOM_CHECK_SECONDS
    key, now = _key(study), time.monotonic()
    look = _looks.get(study.pk)
    if seconds and look is not None and look.key == key and now < look.until and look.spare > REUSE_NEWCOMERS:
        look.spare -= 1
        return True
    regular, check = allocation.newcomer_room(study)
    room = allocation.room_fits(study, regular, check)
    if room and seconds:
        _looks[study.pk] = _Look(key, now + seconds, regular // study.regular_items_per_annotator - 1)
    else:
        _looks.pop(study.pk, None)
    return room
