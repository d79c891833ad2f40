"""Allocation: who judges which presentation, on which side, for how long.

Modules: :mod:`.admission` (register, admit), :mod:`.choice` (which presentations a quota holds),
:mod:`.leases` (serving and renewing), :mod:`.room` (room for newcomers, capacity), :mod:`.pool`
(the study's presentations as admission sees them). Callers use the names exported here.

How it works
------------
* **Admission reserves a full quota.** When an annotator starts (:func:`admit`), one short
  transaction leases their whole sequence of ``items_per_annotator`` presentations: the regular
  ones that most need answers (fewest valid answers + live leases), never beyond k per
  presentation, honouring the level exclusion, spread over run pairs, levels and topics, plus
  the check items. When that spread comes up short, a fill-first pass (per topic and run pair the
  level with more items) finds a full quota whenever one exists. If none exists, nothing is leased
  and the annotator is refused with the screen-out code: nobody starves halfway.
* **Room for a newcomer is one aggregate query.** :func:`can_admit`, the check before consent,
  asks the database how many items a newcomer could get (:func:`newcomer_room`): per (topic, run
  pair) the level with more open presentations, which is exactly what admission reaches. Its cost
  in queries does not depend on the study's size.
* **Capacity is the admission rule, simulated** (for the status report): :func:`capacity` admits
  imaginary newcomers one after another with the same code (nothing written): how many more get a
  full quota, and which open slots no full quota can hold (the tail ``study_status`` reports as unfillable).
* **Items are served one at a time** (:func:`current_assignment`) in sequence order; a reload
  returns the same assignment with the same sides. Sides are balanced per annotator (half of
  the items show run_a on the left) and stored on the assignment. While no lease of the annotator
  has expired (the common case) serving takes no lock: one write renews the lease of the item
  shown (stamping its first serve time), a second records the activity unless it was recorded in
  the last :data:`SEEN_RESOLUTION`.
* **Leases follow progress.** The annotator's steps (consent, onboarding, answers, the platform
  link: :func:`touch`) move all their live leases to ``now + lease_minutes`` (to
  :data:`LEASE_RESOLUTION`: a lease renewed less than that ago is left alone); showing an item
  (its page, a reload, :func:`current_assignment`) and the heartbeat of its page renew only the
  item on screen (:func:`keep_on_screen`), so reloads or heartbeats alone cannot hold a whole
  quota. After that much inactivity their unanswered items count for nobody, so new annotators
  can be admitted onto them. If the annotator comes back, an expired item is renewed when it still has room,
  otherwise it is released and replaced. An answer that arrives on an expired or released
  assignment is still stored and counted (``Preference.late``); the resulting over-coverage shows
  in ``study_status``.
* **Concurrency.** PostgreSQL: candidate presentations are locked with
  ``select_for_update(skip_locked=True)`` and recounted after locking, so simultaneous
  admissions take different rows without waiting. A choice locks up to ``choice.SPARE`` rows more
  than it needs (the next in its order) and takes the first it got below k, so rows held or just
  filled by other arrivals rarely cost a new choice; a new choice reads the counts again. If skipped rows made an admission come up
  short, it is retried once serialised on the study row with blocking locks, so nobody is
  refused because of a transient lock. SQLite: the settings open every transaction with
  ``BEGIN IMMEDIATE``, which serialises these short transactions. In both, the unique
  constraints on (annotator, presentation) and (annotator, position) are the last guard.

Time is injected (``now``) and so is randomness (``rng``), so tests need neither sleeping nor luck.
"""

from studyapp.services.participation.allocation.admission import admit, register, registered
from studyapp.services.participation.allocation.choice import SPREAD_SAMPLE
from studyapp.services.participation.allocation.leases import (
    LEASE_RESOLUTION,
    SEEN_RESOLUTION,
    current_assignment,
    keep_on_screen,
    mark_seen,
    touch,
)
from studyapp.services.participation.allocation.pool import design_item, live_counts
from studyapp.services.participation.allocation.room import Capacity, can_admit, capacity, newcomer_room, room_fits

__all__ = [
    "LEASE_RESOLUTION",
    "SEEN_RESOLUTION",
    "SPREAD_SAMPLE",
    "Capacity",
    "admit",
    "can_admit",
    "capacity",
    "current_assignment",
    "design_item",
    "keep_on_screen",
    "live_counts",
    "mark_seen",
    "newcomer_room",
    "register",
    "registered",
    "room_fits",
    "touch",
]
