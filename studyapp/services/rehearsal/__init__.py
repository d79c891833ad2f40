"""Rehearsal: simulated annotators who take a study through its real pages (:mod:`.simulation`), and
the bundled demo built with them (:mod:`.demo`)."""
