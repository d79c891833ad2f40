"""Collections: test collections in the database.

Owns importing topics, subtopics, qrels, documents and runs (:mod:`.importing`), turning the rows
back into ``evaluation`` structures (:mod:`.evaluation_bridge`), the per-process cache of what
item pages show (:mod:`.display_cache`) and planner statistics after bulk writes
(:mod:`.planner_stats`).
"""
