"""Participation: an annotator's way through a study, from the platform link to the completion code.

Owns the steps (:mod:`.flow`), the fixed practice and comprehension content (:mod:`.onboarding`),
which annotator a browser session is (:mod:`.sessions`), who judges which presentation on which
side and for how long (:mod:`.allocation`, read per request through :mod:`.sequence`), recording
answers (:mod:`.answers`), what an item page shows (:mod:`.item_page`, :mod:`.scale`), leaving
the study (:mod:`.completion`) and which platform may show a participant's pages in its frame
(:mod:`.framing`).
"""
