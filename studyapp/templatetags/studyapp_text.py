"""Template filters for researchers' texts on participant pages (``{% load studyapp_text %}``)."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from studyapp.services.participation.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str | None) -> SafeString:
    """A researcher's Markdown (consent, instructions) as sanitised HTML."""
    return render_markdown(text or "")
