"""The study app's logic, grouped by concern; views and commands call these, never the reverse.

Layers (imports go downward only): ``studyapp.views`` / ``studyapp.management`` / ``studyapp.admin``
-> ``studyapp.services.<concern>`` -> ``studyapp.models`` (and the ``evaluation`` package). No two
concerns use each other, even through others (docs/design.md#concerns-of-studyappservices).

* :mod:`.access`: who may do what: rate limits of arrivals and staff sign-in.
* :mod:`.collections`: test collections in the database: import, the bridge to ``evaluation``
  structures, the item pages' display cache.
* :mod:`.design`: a study's settings (JSON config), its design (presentations) and check items.
* :mod:`.participation`: an annotator's way through a study: entry, onboarding, sessions,
  allocation of presentations and leases, answers, completion, item pages, which platform may
  frame them.
* :mod:`.quality`: per-annotator signals, exclusion rules and the decision log.
* :mod:`.analysis`: the report, the dashboard and its live preview, study status, figures.
* :mod:`.data`: exports, import of answers, pseudonyms, the payments table, erasure of a participant.
* :mod:`.platforms`: the recruitment platforms' adapters (link, identity, completion, API clients).
* :mod:`.review`: a study on its platform: set-up page, drafts, review of submissions, bonuses.
* :mod:`.rehearsal`: simulated annotators through the real pages, and the bundled demo.
* :mod:`.clock`: the one injected clock every service reads.
* :mod:`.wording`: numbers in staff-facing sentences (a count with its noun, a rounded value).
"""
