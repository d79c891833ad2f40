"""Reports of the meta-evaluation: tidy tables (:mod:`.tables`) and matplotlib figures (:mod:`.plots`)."""
