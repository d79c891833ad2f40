"""The study report (docs/studyapp.md#study-report): :mod:`.build` computes it from the study's rows,
:mod:`.page` lays it out as HTML, :mod:`.figures` draws its figures and :mod:`.files` writes it as
a directory the ``evaluation`` command line can recompute. The names below are its public API."""

from studyapp.services.analysis.report.build import StudyReport, build_report, fingerprint
from studyapp.services.analysis.report.figures import draw_figure, figure_sources, figure_stems
from studyapp.services.analysis.report.files import write_report
from studyapp.services.analysis.report.page import render_html

__all__ = ["StudyReport", "build_report", "draw_figure", "figure_sources", "figure_stems", "fingerprint", "render_html", "write_report"]
