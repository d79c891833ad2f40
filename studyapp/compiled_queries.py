"""Hot-path SELECTs whose SQL the ORM compiles once per database connection, then runs with new values.

Every annotator request reads the session's annotator with its study, and item pages and answers
read the annotator's sequence. Building such a query's SQL text (and its column converters) costs
the ORM more CPU than the database spends running it (measured: about 60% of reading the
annotator), and the text never changes. :class:`CompiledQuery` keeps what the ORM's compiler built
for a queryset written with placeholder values, and :meth:`CompiledQuery.fetch` runs it with the
real values, making model instances exactly as the queryset would (select_related objects and
annotations included). This is not PostgreSQL's prepared statements (``DJANGO_PG_PREPARED``): it
saves the ORM's work in this process, whatever the database.

It reads parts of Django that are not public API (the compiler's ``klass_info``, ``select``,
``col_count``, ``annotation_col_map`` and converters, ``get_related_populators``). :func:`compiled`
checks them (:func:`django_internals_problem`) once per process; when they differ from what this
module expects (a Django upgrade), every query runs through the ORM as written, with one warning.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model, QuerySet
from django.db.models import query as django_query
from django.db.models.sql.compiler import SQLCompiler

from studyapp.django_internals import step_aside

M = TypeVar("M", bound=Model)

# per connection (one per thread and alias): key -> CompiledQuery; a closed-and-reopened connection keeps its entries
_BUILT: weakref.WeakKeyDictionary[BaseDatabaseWrapper, dict[Hashable, CompiledQuery]] = weakref.WeakKeyDictionary()
# What this module calls of Django's internals, with the parameters it passes.
EXPECTED = {
    "django.db.models.query.get_related_populators": (lambda: django_query.get_related_populators, ["klass_info", "select", "db"]),
    "django.db.models.query.RelatedPopulator.populate": (lambda: django_query.RelatedPopulator.populate, ["self", "row", "from_obj"]),
    "django.db.models.sql.compiler.SQLCompiler.get_converters": (lambda: SQLCompiler.get_converters, ["self", "expressions"]),
    "django.db.models.Model.from_db": (lambda: Model.from_db.__func__, ["cls", "db", "field_names", "values"]),
}


def django_internals_problem() -> str:
    """What differs in Django from what :class:`CompiledQuery` relies on ('' when nothing does)."""
    for name, (get, parameters) in EXPECTED.items():
        try:
            found = list(inspect.signature(get()).parameters)
        except (AttributeError, TypeError, ValueError) as exc:
            return f"{name} is missing ({exc})"
        if found != parameters:
            return f"{name} takes ({', '.join(found)}), expected ({', '.join(parameters)})"
    return ""


@functools.cache
def _orm_only() -> bool:
    """Is Django not what this module expects? Checked once per process (warns once when so)."""
    return step_aside(
        django_internals_problem(), "compiled queries are off, every query runs through the ORM", "studyapp/compiled_queries.py"
    )


class Fetcher(Protocol[M]):
    def fetch(self, values: Sequence[Any]) -> list[M]: ...


@dataclass(frozen=True)
class OrmQuery(Generic[M]):
    """The fallback: the queryset made with the values, run by the ORM."""

    make: Callable[..., QuerySet[M]]

    def fetch(self, values: Sequence[Any]) -> list[M]:
        return list(self.make(*values))


@dataclass(frozen=True)
class CompiledQuery(Generic[M]):
    """A queryset's SQL, columns and converters as its compiler made them, for one connection."""

    alias: str
    model: type[M]
    sql: str
    order: list[int]  # the SQL's parameters: indexes into the values fetch() is given
    init_list: list[str]  # the model's attnames in column order
    model_columns: slice
    converters: list[tuple[int, list[Callable], Any]]  # (column, converters, expression)
    related: list[Any]  # django's RelatedPopulator per select_related model
    annotations: dict[str, int]  # annotation name -> column

    @classmethod
    def of(cls, queryset: QuerySet[M], placeholders: Sequence[Any]) -> CompiledQuery[M]:
        """Compile ``queryset``, written with the distinct ``placeholders`` as its values.

        :meth:`fetch` takes the values in the order of ``placeholders`` (the SQL may use them in
        another). Raises ``ValueError`` when a compiled parameter is not a placeholder (a value the
        query does not take from the caller would be frozen into every later run) or one is unused.
        """
        alias = queryset.db
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        placeholders = list(placeholders)
        if len(set(placeholders)) != len(placeholders) or set(params) != set(placeholders) or len(params) != len(placeholders):
            raise ValueError(f"the query's parameters {params!r} are not its placeholders {placeholders!r}")
        select = compiler.select[: compiler.col_count]
        klass_info = compiler.klass_info
        fields = klass_info["select_fields"]
        converters = compiler.get_converters([column[0] for column in select])
        return cls(
            alias=alias,
            model=queryset.model,
            sql=sql,
            order=[placeholders.index(param) for param in params],
            init_list=[column[0].target.attname for column in select[fields[0] : fields[-1] + 1]],
            model_columns=slice(fields[0], fields[-1] + 1),
            converters=[(position, functions, expression) for position, (functions, expression) in converters.items()],
            related=django_query.get_related_populators(klass_info, select, alias),
            annotations=dict(compiler.annotation_col_map or {}),
        )

    def fetch(self, values: Sequence[Any]) -> list[M]:
        """The instances the queryset would give with ``values`` in place of its placeholders."""
        connection = connections[self.alias]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, [values[i] for i in self.order])
            rows = cursor.fetchall()
        objects = []
        for row in rows:
            if self.converters:
                row = list(row)
                for position, functions, expression in self.converters:
                    value = row[position]
                    for convert in functions:
                        value = convert(value, expression, connection)
                    row[position] = value
            obj = self.model.from_db(self.alias, self.init_list, row[self.model_columns])
            for populator in self.related:
                populator.populate(row, obj)
            for name, position in self.annotations.items():
                setattr(obj, name, row[position])
            objects.append(obj)
        return objects


def compiled(key: Hashable, make: Callable[..., QuerySet[M]], placeholders: Sequence[Any], alias: str = DEFAULT_DB_ALIAS) -> Fetcher[M]:
    """The query ``key`` for the current connection of ``alias``: ``make(*placeholders)`` compiled the
    first time, kept afterwards; :meth:`fetch` then takes the values in the order of ``placeholders``.

    When Django's internals are not what :class:`CompiledQuery` expects, ``make(*values)`` runs through the ORM instead.
    """
    if _orm_only():
        return OrmQuery(make)
    built = _BUILT.setdefault(connections[alias], {})
    if key not in built:
        built[key] = CompiledQuery.of(make(*placeholders), placeholders)
    return built[key]
