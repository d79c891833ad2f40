"""Thin function views; the logic lives in ``studyapp.services``.

``site``: the landing page and friendly error pages; ``annotator``: the annotator's way through a study.
"""
