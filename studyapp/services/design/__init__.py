"""Design: what a study asks.

Owns the JSON study configuration and its checks (:mod:`.study_config`), creating a study's
design in one transaction (:mod:`.study_design`) and planning check items (:mod:`.check_items`).
"""
