"""The Chinese and Japanese catalogues follow their languages' typography (issue 33, item 9):

- no ASCII punctuation (``, . ; : ? ! ( )``) touching a CJK character: full-width ``，。；：？！（）``;
- no space between two CJK characters. A placeholder (``%(counter)s``, ``{seconds}``) is filled with a
  number or CJK text, so it counts as CJK: ``第%(number)s题``, never ``第 %(number)s 题``. Spaces next to
  Latin words (``Java``, ``Ctrl+C``) are left to the translator.

HTML tags are transparent (``<strong>…</strong>`` joins its neighbours), except the page script's
``<span data-window-width></span>``, which holds a number.
"""

from __future__ import annotations

import re

import polib
import pytest

from tests.studyapp.catalogue import CATALOGUE_DIRS, LOCALE

CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]|\{\w+\}")
NUMBER_SLOT = re.compile(r"<span data-window-width></span>")
TAG = re.compile(r"</?[a-z][^>]*>")
STAND_IN = "\u5b57"  # a Han character for a placeholder
ASCII_PUNCTUATION = re.compile(rf"(?=([{CJK}][,.;:?!()]|[,.;:?!()][{CJK}]))")  # lookaheads: overlapping matches
SPACE_BETWEEN = re.compile(rf"(?=([{CJK}] +[{CJK}]))")


def shaped(text: str) -> str:
    """``text`` as the checks see it: the window-width slot a digit, other tags dropped, placeholders CJK."""
    return PLACEHOLDER.sub(STAND_IN, TAG.sub("", NUMBER_SLOT.sub("0", text.replace("%%", ""))))  # a % belongs to its number


def problems(text: str) -> list[str]:
    text = shaped(text)
    found = [f"ASCII punctuation {m.group(1)!r}" for m in ASCII_PUNCTUATION.finditer(text)]
    found += [f"space between CJK characters {m.group(1)!r}" for m in SPACE_BETWEEN.finditer(text)]
    return found


def test_the_checks_catch_what_they_should() -> None:
    assert problems("第 %(numbers)s 题") == ["space between CJK characters '第 字'", "space between CJK characters '字 题'"]
    assert problems("什么是爪哇咖啡?") == ["ASCII punctuation '啡?'"]
    assert problems("超过%(percent)s%% 偏向同一侧") == ["space between CJK characters '字 偏'"]
    assert problems("左侧 好得多") == ["space between CJK characters '侧 好'"]
    assert problems("%(why)s 差别明显时") == ["space between CJK characters '字 差'"]
    assert problems("学习 Java 编程语言，按 Ctrl+C 复制。") == []
    assert problems("<strong>还剩最后一步：</strong>请将任务提交到%(platform)s。") == []
    assert problems("宽度为 <span data-window-width></span> 像素") == []


@pytest.mark.parametrize("language", ["zh-hans", "ja"])
def test_cjk_catalogues_use_their_own_punctuation_and_no_stray_spaces(language: str) -> None:
    catalogue = polib.pofile(str(LOCALE / CATALOGUE_DIRS[language] / "LC_MESSAGES" / "django.po"))
    found = []
    for entry in catalogue.translated_entries():
        for text in [entry.msgstr, *entry.msgstr_plural.values()]:
            found += [f"{entry.msgid[:60]!r}: {problem}" for problem in problems(text)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("language", "shown"),
    [("en", '<span class="side">Left </span><span class="word">much better</span>'),
     ("zh-hans", '<span class="side">左侧</span><span class="word">好得多</span>'),
     ("ja", '<span class="side">左</span><span class="word">はるかに良い</span>')],
)  # fmt: skip
def test_the_scale_joins_side_and_strength_as_the_language_writes(language: str, shown: str) -> None:
    """On phones each point shows its side and strength: "Left much better", "左侧好得多" (no stray space)."""
    from django.template.loader import render_to_string
    from django.utils import translation

    from studyapp.services.participation.scale import SCALE

    with translation.override(language):
        html = render_to_string("studyapp/annotator/_scale.html", {"scale": SCALE, "needs_count": 1})
    assert shown in html
    # the echo of the choice: "Your answer: Left is better", "您的回答：左侧更好" (no space after the full-width colon)
    assert ('Your answer: <span data-for="">' if language == "en" else '\uff1a<span data-for="">') in html
