"""Data: a study's answers in and out.

Owns the exports (:mod:`.export`), importing answers collected elsewhere (:mod:`.preference_import`),
annotator pseudonyms (:mod:`.pseudonyms`) and the payments table (:mod:`.payments`).
"""
