"""Quality: per-annotator signals, the exclusion rules applied live and in batch, every decision logged
(:mod:`.control`)."""
