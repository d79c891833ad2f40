"""Template filters for researchers' texts on participant pages (``{% load studyapp_text %}``)."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from studyapp.services.participation.markdown import render_markdown
from studyapp.services.participation.scale import word_space

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str | None) -> SafeString:
    """A researcher's Markdown (consent, instructions) as sanitised HTML."""
    return render_markdown(text or "")


@register.simple_tag(name="word_space")
def word_space_tag() -> str:
    """A space between words, none in Chinese and Japanese ("Your answer: Left is better", "您的回答：左侧更好")."""
    return word_space()
