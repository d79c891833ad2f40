"""The study form of the admin's Studies > Add and of /staff/studies/new/ (docs/studyapp.md#the-study-form).

The collection is chosen first (:func:`chosen_collection`); the form then lists its runs and topics as
check boxes and has one field per declared study setting, made from the declaration itself
(``models.study_settings.SETTINGS``: :meth:`StudySetting.model_field`'s form field, its help, bounds,
choices and default), so a new setting is a new field with no other edit. Every field is checked at
once, by the same rules as ``create_study --config`` (:func:`setting_problems`, then
:func:`config_problems` against the collection), each problem next to its field. The JSON
configuration stays available both ways: "Import" fills the fields from it (every unknown key, run or
topic named with the closest known one), "Export" downloads the fields as the JSON that
``create_study --config`` takes (the report bundle's ``study.json`` has the same shape).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.utils.datastructures import MultiValueDict
from django.utils.functional import Promise
from django.utils.html import escape

from studyapp.exceptions import InvalidStudyConfig
from studyapp.models import Collection, Run, Topic, study_settings
from studyapp.models.study_settings import StudySetting
from studyapp.services.access.teams import set_team
from studyapp.services.design.study_config import STRUCTURE, keys, parse_config, setting_problems, unknown_names
from studyapp.services.design.study_design import NAME_MAX, DesignSummary, config_problems, create_study, study_slug

TOPIC_CHOICES = [
    ("all", "every topic with subtopics and a ranked list in every ticked run"),
    ("rule", "a number of topics by a rule: those with the fewest subtopics, but at least the minimum (topic_rule)"),
    ("list", "the topics ticked below (topics)"),
]
LEVEL_CHOICES = [("topic", "topic level: the whole query"), ("subtopic", "subtopic level: one intent of the query at a time")]
ACTIONS = {"import": "import", "export": "export"}  # the submit buttons besides "Create study"
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _plain(text: str) -> str:
    """Docs Markdown as plain words: links as their text, no code marks."""
    return _MARKDOWN_LINK.sub(r"\1", text).replace("`", "")


def setting_label(setting: StudySetting) -> str:
    return setting.name.replace("_", " ").capitalize()


def setting_help(setting: StudySetting) -> str:
    """The field's help: the declaration's help, its range, its default and its JSON key."""
    allowed = ", ".join(setting.choices.values) if setting.choices else setting.bounds_text()
    default = "empty" if setting.initial is None else _plain(setting.default_text())  # each optional one's help says what empty means
    parts = [setting.help, f"allowed: {allowed}" if allowed else "", f"default: {default}"]
    return "; ".join(p for p in parts if p) + f" (key {setting.name})"


def setting_field(setting: StudySetting) -> forms.Field:
    """The form field of ``setting``: its column's form field (type, choices, required or not), labelled and
    explained from the declaration. A yes/no setting has a third choice, the default, which leaves the key out
    as a configuration file would (``require_platform_id``'s default depends on ``redirect_url``)."""
    column = setting.model_field()
    column.set_attributes_from_name(setting.name)
    options: dict[str, Any] = {"label": setting_label(setting), "help_text": escape(setting_help(setting))}  # help is HTML
    if setting.type is bool:
        default = _plain(setting.default_text())
        choices = [("", f"default ({default})"), ("True", "yes"), ("False", "no")]
        field = column.formfield(form_class=forms.NullBooleanField, widget=forms.RadioSelect(choices=choices), **options)
        field.initial = None
        return field
    field = column.formfield(**options)
    field.initial = setting.initial
    if isinstance(field.widget, forms.Textarea):
        field.widget.attrs.update(rows=4, cols=80)
    for attr, bound, open_ in (("min", setting.low, setting.low_open), ("max", setting.high, setting.high_open)):
        if bound is not None and not open_ and setting.type in (int, float, Decimal):
            field.widget.attrs[attr] = bound  # the form has novalidate: the server reports every problem at once
    return field


@dataclass(frozen=True)
class Fieldset:
    legend: str
    fields: list
    description: str = ""


# Where a problem of the collection checks (services.design.study_design) belongs, by its first words.
_PROBLEM_FIELDS = [
    (re.compile(r"^(the study|a study named|another study)"), "name"),
    (re.compile(r"^(unknown run|no topic has)"), "runs"),
    (re.compile(r"^(unknown topic|topic \S+ has)"), "topics"),
    (re.compile(r"^topic_rule"), "topic_count"),
    (re.compile(r"^\d+ check items"), "check_share"),
]


def problem_field(problem: str, fields: dict[str, Any]) -> str | None:
    """The field a configuration problem is about: its first word when that is a field, else by :data:`_PROBLEM_FIELDS`."""
    first = problem.split(" ", 1)[0]
    if first in fields:
        return first
    return next((name for pattern, name in _PROBLEM_FIELDS if pattern.match(problem)), None)


class CreateStudyForm(forms.Form):
    """Everything ``manage.py create_study`` takes, as fields; validated by the same services."""

    collection = forms.ModelChoiceField(queryset=Collection.objects.all(), widget=forms.HiddenInput)
    name = forms.CharField(max_length=NAME_MAX, help_text="shown to staff; the study's link is made from it")
    runs = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, help_text="every pair of the ticked runs is compared; tick two or more", required=False
    )
    topic_choice = forms.ChoiceField(label="Topics shown", choices=TOPIC_CHOICES, initial="all", widget=forms.RadioSelect)
    topic_count = forms.IntegerField(label="Number of topics", required=False, min_value=1, max_value=100000, help_text="for a rule")
    topic_min_subtopics = forms.IntegerField(
        label="Least subtopics per topic", required=False, min_value=1, max_value=1000, initial=1, help_text="for a rule"
    )
    topics = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False, help_text="when ticking topics")
    levels = forms.MultipleChoiceField(
        choices=LEVEL_CHOICES, initial=["topic", "subtopic"], widget=forms.CheckboxSelectMultiple, help_text="one or both"
    )
    config = forms.CharField(
        label="JSON configuration",
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80, "class": "monospace", "spellcheck": "false"}),
        help_text='the file create_study --config takes, e.g. {"runs": ["run-a", "run-b"], "depth": 10}; '
        "Import fills the fields above from it (keys left out take their defaults)",
    )

    def __init__(self, *args, collection: Collection | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.chosen = collection
        if collection is not None:
            self.fields["collection"].initial = collection.pk
            self.fields["runs"].choices = [
                (r, r) for r in Run.objects.filter(collection=collection).order_by("name").values_list("name", flat=True)
            ]
            topics = Topic.objects.filter(collection=collection).order_by("position").values_list("topic_id", "query")
            self.fields["topics"].choices = [(tid, f"{tid}: {query}" if query else tid) for tid, query in topics]
        for setting in study_settings.SETTINGS:  # read when the form is made: a new setting is a new field
            self.fields[setting.name] = setting_field(setting)
        self.config_value: dict[str, Any] | None = None

    # -- the page ----------------------------------------------------------------------------------

    def fieldsets(self) -> list[Fieldset]:
        settings = study_settings.SETTINGS
        return [
            Fieldset("Study", [self["name"], self["runs"]]),
            Fieldset("Topics and levels", [self[n] for n in ("topic_choice", "topic_count", "topic_min_subtopics", "topics", "levels")]),
            Fieldset("Design", [self[s.name] for s in settings if s.frozen], "fixed once the study exists: its presentations follow them"),
            Fieldset("Running the study", [self[s.name] for s in settings if not s.frozen], "staff can change these later in the admin"),
        ]

    def error_links(self) -> list[tuple[str, str, str]]:
        """``(element id, field label, problem)`` of every field's problem, in the page's order (the error summary's links)."""
        links = []
        for bound in self:
            if bound.name == "collection":
                continue
            target = bound.auto_id + ("_0" if isinstance(bound.field.widget, (forms.RadioSelect, forms.CheckboxSelectMultiple)) else "")
            links += [(target, str(bound.label), str(error)) for error in bound.errors]
        return links

    def problem_count(self) -> int:
        return len(self.error_links()) + len(self.other_errors())

    def other_errors(self) -> list[str]:
        """The problems of no one field (and of the collection, a hidden field)."""
        return [*self.non_field_errors(), *(f"collection: {e}" for e in self.errors.get("collection", []))]

    # -- checking ----------------------------------------------------------------------------------

    def setting_values(self, data: dict[str, Any]) -> dict[str, Any]:
        """The configuration's value of every setting filled in: a yes/no left at "default" and a text left at its
        translated default are left out (``create_study`` then stores the default text in the study's language)."""
        values = {}
        for setting in study_settings.SETTINGS:
            if setting.name not in data:
                continue
            value = data[setting.name]
            if setting.type is bool and value is None:
                continue
            if isinstance(value, str):
                value = value.replace("\r\n", "\n").strip()
                if isinstance(setting.initial, Promise) and value == str(setting.initial).strip():
                    continue
            values[setting.name] = str(value) if isinstance(value, Decimal) else value
        return values

    def structure(self, data: dict[str, Any]) -> dict[str, Any]:
        """``runs``, ``topics`` or ``topic_rule``, and ``levels`` of the configuration; their problems added to the form."""
        config: dict[str, Any] = {}
        runs = data.get("runs") or []
        if len(runs) < 2 and "runs" not in self.errors:
            self.add_error("runs", "tick at least 2 runs (every pair of them is compared)")
        config["runs"] = list(runs)
        choice = data.get("topic_choice")
        if choice == "rule":
            if data.get("topic_count") is None and "topic_count" not in self.errors:
                self.add_error("topic_count", "give the number of topics the rule chooses")
            config["topic_rule"] = {"count": data.get("topic_count"), "min_subtopics": data.get("topic_min_subtopics") or 1}
        elif choice == "list":
            if not data.get("topics") and "topics" not in self.errors:
                self.add_error("topics", "tick at least 1 topic, or choose another way of choosing topics")
            config["topics"] = list(data.get("topics") or [])
        if data.get("levels"):
            config["levels"] = list(data["levels"])
        return config

    def clean(self):
        """Every problem at once: each field's own, each setting's declaration (:func:`setting_problems`), the runs and
        topics, then the collection's checks (names, topics, capacity), each next to the field it is about."""
        data = super().clean()
        values = self.setting_values(data)
        for key, reason in setting_problems(values):
            if key not in self.errors:
                self.add_error(key if key in self.fields else None, reason)
        config = {**self.structure(data), **{k: v for k, v in values.items() if k not in self.errors}}
        self.config_value = config
        collection = data.get("collection")
        if collection is None:
            return data
        if {"runs", "topic_count", "topic_min_subtopics", "topics", "topic_choice", "levels"} & set(self.errors):
            return data  # the collection's checks need runs and topics
        # A name already refused gives way to one surely free, so the collection's checks still run.
        name = data["name"] if "name" not in self.errors else f"unnamed-{uuid.uuid4().hex}"
        for problem in config_problems(collection.name, name, config):
            field = problem_field(problem, self.fields)
            if field not in self.errors:
                self.add_error(field, problem)
        if not self.errors:
            data["parsed"] = parse_config(config)
        return data

    # -- the JSON configuration --------------------------------------------------------------------

    def exported(self) -> str:
        """The fields as the JSON ``create_study --config`` takes (after a valid check)."""
        return json.dumps(self.config_value, indent=2, ensure_ascii=False) + "\n"

    def imported(self) -> CreateStudyForm:
        """A form filled from this form's JSON configuration (the collection and name kept), every problem shown:
        invalid JSON, unknown keys, runs and topics (with the closest known ones) and each value's own."""
        text = self.data.get("config", "")
        base = {k: self.data.get(k, "") for k in ("collection", "name")}
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            return self._with_problems(MultiValueDict({**{k: [v] for k, v in base.items()}, "config": [text]}), [
                ("config", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
            ])  # fmt: skip
        if not isinstance(raw, dict):
            return self._with_problems(MultiValueDict({"config": [text]}), [("config", "the configuration must be a JSON object")])
        problems = [("config", p) for p in unknown_names("key", sorted(set(raw) - set(keys())), keys())]
        data = MultiValueDict({**{k: [v] for k, v in base.items()}, "config": [text]})
        for key, field in (("runs", "runs"), ("topics", "topics")):
            if key in raw:
                given = [str(v) for v in raw[key]] if isinstance(raw[key], list) else []
                known = [value for value, _ in self.fields[field].choices]
                where = f" in collection {self.chosen.name!r}" if self.chosen else ""
                problems += [(field, p) for p in unknown_names(key[:-1], given, known, where)]
                data.setlist(field, [v for v in given if v in known])
        if "topic_rule" in raw and isinstance(raw["topic_rule"], dict):
            data["topic_choice"] = "rule"
            data["topic_count"] = _text(raw["topic_rule"].get("count"))
            data["topic_min_subtopics"] = _text(raw["topic_rule"].get("min_subtopics", 1))
        else:
            data["topic_choice"] = "list" if "topics" in raw else "all"
        data.setlist("levels", raw.get("levels") if isinstance(raw.get("levels"), list) else ["topic", "subtopic"])
        for setting in study_settings.SETTINGS:
            value = raw.get(setting.name, setting.initial if setting.type is not bool else None)
            data[setting.name] = _text(value)
        problems += [(key, reason) for key, reason in setting_problems({k: v for k, v in raw.items() if k not in STRUCTURE})]
        return self._with_problems(data, problems)

    def _with_problems(self, data: MultiValueDict, problems: list[tuple[str, str]]) -> CreateStudyForm:
        form = CreateStudyForm(data, collection=self.chosen)
        form.is_valid()
        replaced = {field for field, _ in problems if field in form.fields}
        for field in replaced:
            form.errors.pop(field, None)  # the configuration's words replace the form's
        for field, problem in problems:
            form.add_error(field if field in replaced else None, problem)
        return form

    # -- creating ----------------------------------------------------------------------------------

    def create(self, user) -> DesignSummary:
        """Design the study (``create_study``'s service) and make ``user`` its owner; raises InvalidStudyConfig."""
        data = self.cleaned_data
        summary = create_study(data["collection"].name, data["name"], data["parsed"])
        set_team(summary.study, user.get_username())  # whoever creates a study owns it
        return summary


def _text(value: Any) -> str:
    """A JSON value as a form field's text (a form posts text)."""
    if value is None:
        return ""
    if isinstance(value, (bool, int, float, Decimal, str, Promise)):
        return str(value)
    return json.dumps(value)


def chosen_collection(request: HttpRequest) -> Collection | None:
    """The collection the form is for: the posted one, else ``?collection=`` (its id), else the only one there is."""
    wanted = request.POST.get("collection") or request.GET.get("collection")
    if wanted and str(wanted).isdigit():
        return Collection.objects.filter(pk=wanted).first()
    collections = list(Collection.objects.all()[:2])
    return collections[0] if len(collections) == 1 else None


@dataclass
class StudyFormStep:
    """What one request to the study form gives: the form to show, or the created study, or the JSON to download."""

    form: CreateStudyForm | None
    summary: DesignSummary | None = None
    download: str | None = None
    filename: str = "study.json"


def study_form_step(request: HttpRequest) -> StudyFormStep:
    """The study form's step for ``request`` (shared by the staff page and the admin): without a collection,
    none (the page asks for one); on "Import", the fields filled from the JSON; on "Export", the JSON of valid
    fields; on "Create study", the study, or the form with every problem."""
    collection = chosen_collection(request)
    if collection is None:
        return StudyFormStep(None)
    if request.method != "POST":
        return StudyFormStep(CreateStudyForm(collection=collection))
    form = CreateStudyForm(request.POST, collection=collection)
    if "import" in request.POST:
        return StudyFormStep(form.imported())
    if not form.is_valid():
        return StudyFormStep(form)
    if "export" in request.POST:
        return StudyFormStep(form, download=form.exported(), filename=f"{study_slug(form.cleaned_data['name'])}.json")
    try:
        return StudyFormStep(form, summary=form.create(request.user))
    except InvalidStudyConfig as exc:  # what changed between the check and the writing (a name taken meanwhile)
        for error in exc.errors:
            form.add_error(None, error)
        return StudyFormStep(form)


def json_download(text: str, filename: str) -> HttpResponse:
    """The exported configuration as a file to save (``create_study --config`` takes it)."""
    response = HttpResponse(text, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
