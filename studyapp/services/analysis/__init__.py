"""Analysis: what a study's answers say.

Owns scoring what the annotators saw with every metric (:mod:`.study_analysis`), the study report
(:mod:`.report`), the staff dashboard's numbers and figures (:mod:`.dashboard`, :mod:`.figures`),
its live preview of which metric agrees so far (:mod:`.preview`) and the study's progress
(:mod:`.status`). Reads the database; writes nothing but report files.
"""
