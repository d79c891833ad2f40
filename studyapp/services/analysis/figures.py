"""Inline SVG figures of the staff dashboard, drawn on the server from services.analysis.dashboard's numbers.

No script and no inline style (the site's Content-Security-Policy forbids both): shapes carry
classes that ``static/studyapp/staff.css`` colours. Every figure has a ``<title>`` and the page
shows the same numbers as a table.
"""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from studyapp.services.analysis.dashboard import Completion, Histogram, SideBalance

WIDTH = 640


def _svg(height: int, title: str, body: list[str], css: str) -> SafeString:
    return mark_safe(
        f'<svg class="figure {css}" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{"".join(body)}</svg>'
    )


def _text(x: float, y: float, text: str, css: str = "label", anchor: str = "start") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" class="{css}" text-anchor="{anchor}">{escape(text)}</text>'


def histogram_svg(h: Histogram) -> SafeString:
    """Bars of decision times; bins under the fast threshold stand out and the threshold is a dashed line."""
    height, left, right, top, bottom = 240, 48, 16, 24, 40
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    peak = max(h.counts) if h.total else 0
    scale = plot_h / peak if peak else 0
    bar_w = plot_w / len(h.counts)
    seconds_to_x = lambda s: left + s / h.width * bar_w  # noqa: E731
    body = [f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" class="axis"/>']
    for i, count in enumerate(h.counts):
        if not count:
            continue
        css = "bar fast" if (i + 1) * h.width <= h.threshold else "bar"
        x, bar_h = left + i * bar_w, count * scale
        label = f"{i * h.width:g}-{(i + 1) * h.width:g} s" if i < len(h.counts) - 1 else f"{h.limit:g} s or more"
        body.append(
            f'<rect x="{x + 1:.1f}" y="{top + plot_h - bar_h:.1f}" width="{bar_w - 2:.1f}" height="{bar_h:.1f}" class="{css}">'
            f"<title>{escape(label)}: {count}</title></rect>"
        )
    for s in range(0, int(h.limit) + 1, 10):
        x = seconds_to_x(s)
        body.append(f'<line x1="{x:.1f}" y1="{top + plot_h}" x2="{x:.1f}" y2="{top + plot_h + 5}" class="axis"/>')
        body.append(_text(x, top + plot_h + 18, f"{s}{'+' if s == h.limit else ''}", anchor="middle"))
    body.append(_text(left + plot_w / 2, height - 4, "decision time (server, seconds)", anchor="middle"))
    body.append(_text(left - 6, top + 4, str(peak), anchor="end"))
    body.append(_text(left - 6, top + plot_h, "0", anchor="end"))
    x = seconds_to_x(min(h.threshold, h.limit))
    body.append(f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{top + plot_h}" class="threshold"/>')
    body.append(_text(x + 4, top - 10 + 12, f"fast threshold {h.threshold:g} s: {h.fast} of {h.total} answers faster", "label strong"))
    title = f"Histogram of {h.total} decision times; {h.fast} under the fast threshold of {h.threshold:g} s"
    return _svg(height, title, body, "histogram")


def _stacked_bar(y: float, parts: list[tuple[float, str, str]], height: float, left: float, width: float) -> list[str]:
    """A horizontal bar of shares (each (share, css class, tooltip)) starting at ``left``."""
    body, x = [], left
    for share, css, tip in parts:
        w = share * width
        if w > 0:
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{height}" class="{css}"><title>{escape(tip)}</title></rect>'
            )
        x += w
    body.append(f'<rect x="{left}" y="{y:.1f}" width="{width}" height="{height}" class="outline"/>')
    return body


def completion_svg(levels: list[Completion], k: int) -> SafeString:
    """One bar per level: presentations complete (>= k valid answers) and the rest."""
    row, left, width = 34, 110, WIDTH - 110 - 150
    body = []
    for i, c in enumerate(levels):
        y = 10 + i * row
        body.append(_text(0, y + 15, f"{c.level} level"))
        done = c.complete / c.presentations if c.presentations else 0
        body += _stacked_bar(y, [(done, "done", f"{c.complete} complete"), (1 - done, "todo", f"{c.presentations - c.complete} not yet")],
                             20, left, width)  # fmt: skip
        body.append(_text(left + width + 8, y + 15, f"{c.complete}/{c.presentations} ({done:.0%})"))
    title = "; ".join(f"{c.level} level: {c.complete} of {c.presentations} presentations have {k} valid answers" for c in levels)
    return _svg(10 + row * max(len(levels), 1), title or "no presentations", body, "completion")


def sides_svg(s: SideBalance) -> SafeString:
    """Answers preferring the left page, ties, and the right page; and how often run_a was on the left."""
    left, width = 110, WIDTH - 110 - 150
    body = [_text(0, 25, "preferred")]
    body += _stacked_bar(10, [(s.share(s.left), "left", f"left page: {s.left}"), (s.share(s.tie), "tie", f"equal: {s.tie}"),
                              (s.share(s.right), "right", f"right page: {s.right}")], 20, left, width)  # fmt: skip
    body.append(_text(left + width + 8, 25, f"L {s.share(s.left):.0%} / R {s.share(s.right):.0%}"))
    shown = s.a_left + s.a_right
    a_left = s.a_left / shown if shown else 0
    body.append(_text(0, 59, "run_a shown"))
    body += _stacked_bar(44, [(a_left, "left", f"run_a on the left: {s.a_left}"), (1 - a_left if shown else 0, "right", f"on the right: {s.a_right}")],
                         20, left, width)  # fmt: skip
    body.append(_text(left + width + 8, 59, f"left {a_left:.0%}"))
    for x, css, label in (
        (left, "left", "left page / run_a left"),
        (left + 170, "tie", "neither"),
        (left + 250, "right", "right page / run_a right"),
    ):
        body.append(f'<rect x="{x}" y="76" width="10" height="10" class="{css}"/>')
        body.append(_text(x + 14, 85, label, "legend"))
    title = f"{s.left} answers prefer the left page, {s.tie} neither, {s.right} the right page; run_a on the left in {s.a_left} of {shown}"
    return _svg(92, title, body, "sides")
