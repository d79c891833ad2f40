"""Hot-path statements whose SQL the ORM compiles once per database connection, then runs with new values.

Every annotator request reads the session's annotator with its study, and item pages and answers
read the annotator's sequence. Building such a query's SQL text (and its column converters) costs
the ORM more CPU than the database spends running it (measured: about 60% of reading the
annotator), and the text never changes. :class:`CompiledQuery` keeps what the ORM's compiler built
for a queryset written with placeholder values, and :meth:`CompiledQuery.fetch` runs it with the
real values, making model instances exactly as the queryset would (select_related objects and
annotations included). A row that holds every column of a plain model (no ``__init__``/``from_db`` of its
own, no ``pre_init``/``post_init`` receivers, no field descriptor that does more on assignment than store
the value) is made without ``Model.__init__``: the same instance dictionary, written at once
(:func:`instance_maker`; an item page builds 20-odd instances, each ``__init__`` about 25 Python calls).
The same is done for an ``UPDATE`` (:func:`compiled_update`: the item page's lease renewal) and for
``Model.objects.create``'s ``INSERT`` (:func:`create`: the answer). This is not PostgreSQL's prepared statements (``DJANGO_PG_PREPARED``): it
saves the ORM's work in this process, whatever the database.

It reads parts of Django that are not public API (the compiler's ``klass_info``, ``select``,
``col_count``, ``annotation_col_map`` and converters, ``get_related_populators`` and its populators'
attributes, ``UpdateQuery.add_update_values``, ``InsertQuery.insert_values``,
``Model._prepare_related_fields_for_save``). :func:`compiled`
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

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model, QuerySet
from django.db.models import query as django_query
from django.db.models import sql as django_sql
from django.db.models.base import ModelState
from django.db.models.fields import Field
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query_utils import DeferredAttribute
from django.db.models.signals import post_init, post_save, pre_init, pre_save
from django.db.models.sql.compiler import SQLCompiler

from studyapp.django_internals import step_aside

M = TypeVar("M", bound=Model)

# per connection (one per thread and alias): key -> CompiledQuery, CompiledUpdate or CompiledInsert (None: not compilable); a closed-and-reopened connection keeps its entries
_BUILT: weakref.WeakKeyDictionary[BaseDatabaseWrapper, dict[Hashable, Any]] = weakref.WeakKeyDictionary()
# What this module calls of Django's internals, with the parameters it passes.
EXPECTED = {
    "django.db.models.query.get_related_populators": (lambda: django_query.get_related_populators, ["klass_info", "select", "db"]),
    "django.db.models.query.RelatedPopulator.populate": (lambda: django_query.RelatedPopulator.populate, ["self", "row", "from_obj"]),
    "django.db.models.sql.compiler.SQLCompiler.get_converters": (lambda: SQLCompiler.get_converters, ["self", "expressions"]),
    "django.db.models.Model.from_db": (lambda: Model.from_db.__func__, ["cls", "db", "field_names", "values"]),
    "django.db.models.sql.UpdateQuery.add_update_values": (lambda: django_sql.UpdateQuery.add_update_values, ["self", "values"]),
    "django.db.models.sql.InsertQuery.insert_values": (lambda: django_sql.InsertQuery.insert_values, ["self", "fields", "objs", "raw"]),
    "django.db.models.Model._prepare_related_fields_for_save": (
        lambda: Model._prepare_related_fields_for_save,
        ["self", "operation_name", "fields"],
    ),
}
# What a RelatedPopulator holds that :func:`_populate` reads (Django 5.2's ``RelatedPopulator.populate`` does the same).
POPULATOR_ATTRIBUTES = ("reorder_for_init", "cols_start", "cols_end", "pk_idx", "model_cls", "init_list", "related_populators",
                        "local_setter", "remote_setter", "db")  # fmt: skip
# Field descriptors whose assignment only stores the value in a new instance's __dict__ (a foreign key's also forgets
# a cached related object, which a new instance does not have).
PLAIN_DESCRIPTORS = (DeferredAttribute, ForeignKeyDeferredAttribute)


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


def _class_attribute(model: type[Model], name: str) -> Any:
    for klass in model.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


@functools.cache
def instance_maker(model: type[M], alias: str, attnames: tuple[str, ...]) -> Callable[[Sequence[Any]], M] | None:
    """A function making the instance ``model.from_db(alias, attnames, values)`` would make, without ``Model.__init__``,
    or None when ``model`` is not plain enough for that (see the module's docstring) or ``attnames`` is not every
    concrete field in the model's order. The caller checks that no ``pre_init``/``post_init`` receiver was
    connected since (:func:`_signals_quiet`)."""
    if model.__init__ is not Model.__init__ or model.from_db.__func__ is not Model.from_db.__func__:
        return None
    if attnames != tuple(field.attname for field in model._meta.concrete_fields) or "_state" in attnames:
        return None
    if any(type(_class_attribute(model, name)) not in PLAIN_DESCRIPTORS for name in attnames):
        return None

    def make(values: Sequence[Any]) -> M:
        obj = model.__new__(model)
        state = ModelState()
        state.adding, state.db = False, alias
        fields = obj.__dict__
        fields["_state"] = state
        fields.update(zip(attnames, values))
        return obj

    return make


def _signals_quiet() -> bool:
    """No ``pre_init`` or ``post_init`` receiver at all (none is connected in this project)."""
    return not pre_init.receivers and not post_init.receivers


def _readable(populators: list[Any]) -> bool:
    """Do ``populators`` (and theirs) hold what :func:`_populate` reads?"""
    return all(all(hasattr(p, name) for name in POPULATOR_ATTRIBUTES) and _readable(list(p.related_populators)) for p in populators)


def _populate(populator: Any, row: Sequence[Any], from_obj: Model, quiet: bool) -> None:
    """``populator.populate(row, from_obj)``, the related instance made by :func:`instance_maker` when it can be."""
    obj_data = populator.reorder_for_init(row) if populator.reorder_for_init else row[populator.cols_start : populator.cols_end]
    if obj_data[populator.pk_idx] is None:
        obj = None
    else:
        make = instance_maker(populator.model_cls, populator.db, tuple(populator.init_list)) if quiet else None
        obj = make(obj_data) if make is not None else populator.model_cls.from_db(populator.db, populator.init_list, obj_data)
        for nested in populator.related_populators:
            _populate(nested, row, obj, quiet)
    populator.local_setter(from_obj, obj)
    if obj is not None:
        populator.remote_setter(obj, from_obj)


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
    readable: bool  # the related populators hold what _populate reads (else their own populate() runs)

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
        related = django_query.get_related_populators(klass_info, select, alias)
        return cls(
            alias=alias,
            model=queryset.model,
            sql=sql,
            order=[placeholders.index(param) for param in params],
            init_list=[column[0].target.attname for column in select[fields[0] : fields[-1] + 1]],
            model_columns=slice(fields[0], fields[-1] + 1),
            converters=[(position, functions, expression) for position, (functions, expression) in converters.items()],
            related=related,
            annotations=dict(compiler.annotation_col_map or {}),
            readable=_readable(related),
        )

    def fetch(self, values: Sequence[Any]) -> list[M]:
        """The instances the queryset would give with ``values`` in place of its placeholders."""
        connection = connections[self.alias]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, [values[i] for i in self.order])
            rows = cursor.fetchall()
        objects = []
        quiet = _signals_quiet()
        make = instance_maker(self.model, self.alias, tuple(self.init_list)) if quiet else None
        for row in rows:
            if self.converters:
                row = list(row)
                for position, functions, expression in self.converters:
                    value = row[position]
                    for convert in functions:
                        value = convert(value, expression, connection)
                    row[position] = value
            values = row[self.model_columns]
            obj = make(values) if make is not None else self.model.from_db(self.alias, self.init_list, values)
            for populator in self.related:
                if self.readable:
                    _populate(populator, row, obj, quiet)
                else:
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


class Updater(Protocol):
    def run(self, values: Sequence[Any]) -> int: ...


@dataclass(frozen=True)
class OrmUpdate:
    """The fallback: ``queryset.update(**changes)`` of what ``make(*values)`` gives, by the ORM."""

    make: Callable[..., tuple[QuerySet, dict[str, Any]]]

    def run(self, values: Sequence[Any]) -> int:
        queryset, changes = self.make(*values)
        return queryset.update(**changes)


@dataclass(frozen=True)
class CompiledUpdate:
    """An ``UPDATE`` as ``QuerySet.update`` compiles it, for one connection; each run prepares its values as the
    ORM does (the field's ``get_db_prep_save``: the same as a lookup's for the key, integer and date-time
    fields this is used with)."""

    alias: str
    sql: str
    params: list[tuple[int, Field]]  # per SQL parameter: the index of its value and the field that prepares it

    @classmethod
    def of(cls, queryset: QuerySet, changes: dict[str, Any], placeholders: Sequence[tuple[Field, Any]]) -> CompiledUpdate:
        """Compile ``queryset.update(**changes)``, written with the distinct values of ``placeholders`` (each with the field
        that prepares it); :meth:`run` takes the values in that order. ``ValueError`` when the SQL's parameters are not
        the placeholders' prepared values, each once."""
        query = queryset.query.chain(django_sql.UpdateQuery)
        query.add_update_values(changes)
        query.clear_select_clause()
        if query.related_updates or query.order_by:
            raise ValueError("only an update of one table without ordering is compiled")
        sql, params = query.get_compiler(queryset.db).as_sql()
        connection = connections[queryset.db]
        prepared = [field.get_db_prep_save(value, connection) for field, value in placeholders]
        if len({repr(p) for p in prepared}) != len(prepared) or sorted(map(repr, params)) != sorted(map(repr, prepared)):
            raise ValueError(f"the update's parameters {params!r} are not its placeholders {prepared!r}")
        order = [prepared.index(param) for param in params]
        return cls(queryset.db, sql, [(i, placeholders[i][0]) for i in order])

    def run(self, values: Sequence[Any]) -> int:
        """The rows changed (``QuerySet.update``'s return value), with ``values`` in place of the placeholders."""
        connection = connections[self.alias]
        params = [field.get_db_prep_save(values[i], connection) for i, field in self.params]
        with transaction.mark_for_rollback_on_error(using=self.alias), connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            return cursor.rowcount


def compiled_update(
    key: Hashable,
    make: Callable[..., tuple[QuerySet, dict[str, Any]]],
    placeholders: Sequence[tuple[Field, Any]],
    alias: str = DEFAULT_DB_ALIAS,
) -> Updater:
    """The update ``key`` for the current connection of ``alias``: ``make(*values)`` gives a queryset and its changes
    (``queryset.update(**changes)``), compiled the first time with the placeholders' values (each with its field);
    :meth:`run` then takes the values in that order. By the ORM when Django is not what this module expects."""
    if _orm_only():
        return OrmUpdate(make)
    built = _BUILT.setdefault(connections[alias], {})
    if key not in built:
        built[key] = CompiledUpdate.of(*make(*(value for _, value in placeholders)), placeholders)
    return built[key]


@functools.cache
def _saves_plainly(model: type[Model]) -> bool:
    """Is ``model.objects.create()``'s save Django's own, one table with an automatic primary key?"""
    meta = model._meta
    own = ("save", "save_base", "_save_table", "_do_insert")
    return (
        not meta.parents
        and not meta.proxy
        and meta.auto_field is not None
        and meta.pk is meta.auto_field
        and all(getattr(model, name) is getattr(Model, name) for name in own)
    )


@dataclass(frozen=True)
class CompiledInsert:
    """``model.objects.create()``'s ``INSERT ... RETURNING`` as the ORM compiles it, for one connection."""

    alias: str
    sql: str
    fields: list[Field]  # the inserted columns' fields, in the SQL's order
    returning: list[Field]

    @classmethod
    def of(cls, model: type[Model], alias: str) -> CompiledInsert | None:
        """None when the database does not return the new row's columns from the INSERT itself, or they need converting."""
        connection = connections[alias]
        meta = model._meta
        if not connection.features.can_return_columns_from_insert:
            return None
        fields = [f for f in meta.local_concrete_fields if f is not meta.auto_field and not f.generated]
        returning = list(meta.db_returning_fields)
        query = django_sql.InsertQuery(model)
        query.insert_values(fields, [model()], raw=False)
        compiler = query.get_compiler(using=alias)
        compiler.returning_fields = returning
        [(sql, _)] = compiler.as_sql()
        if compiler.returning_params or compiler.get_converters([f.get_col(meta.db_table) for f in returning]):
            return None
        return cls(alias, sql, fields, returning)

    def save(self, obj: Model) -> None:
        """Insert the new ``obj`` as ``Model.save()`` does (same checks, values, primary key and state)."""
        obj._prepare_related_fields_for_save(operation_name="save")
        connection = connections[self.alias]
        params = [field.get_db_prep_save(field.pre_save(obj, True), connection) for field in self.fields]
        with transaction.mark_for_rollback_on_error(using=self.alias), connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            row = connection.ops.fetch_returned_insert_columns(cursor, ())
        for value, field in zip(row, self.returning, strict=True):
            setattr(obj, field.attname, value)
        obj._state.db = self.alias
        obj._state.adding = False


def create(model: type[M], alias: str = DEFAULT_DB_ALIAS, **values: Any) -> M:
    """``model.objects.create(**values)`` on ``alias``, its INSERT compiled once per connection (:class:`CompiledInsert`):
    by the ORM when a ``pre_save``/``post_save`` receiver listens to ``model``, its save is its own, the database
    cannot return the new row from the INSERT, or Django is not what this module expects."""
    if _orm_only() or not _saves_plainly(model) or pre_save.has_listeners(model) or post_save.has_listeners(model):
        return model._default_manager.db_manager(alias).create(**values)
    built = _BUILT.setdefault(connections[alias], {})
    key = ("insert", model)
    if key not in built:
        built[key] = CompiledInsert.of(model, alias)
    insert = built[key]
    if insert is None:
        return model._default_manager.db_manager(alias).create(**values)
    obj = model(**values)
    insert.save(obj)
    return obj
