"""Querysets whose SQL Django builds once per process, then runs with each request's values.

Building a queryset's SQL costs Django's ORM far longer than SQLite or PostgreSQL takes to answer
an indexed lookup. A :class:`PreparedQuery` builds its queryset once per database alias with
stand-in values, keeps the SQL and Django's own plan for turning rows into model instances
(``select_related`` objects, annotations, the database's value converters), and on each call
runs that SQL with the real values in the stand-ins' places. Everything else (the current time,
a constant) is fixed at build time, so a value that changes must be a stand-in too.

It reads ORM internals (the compiler's ``klass_info``, ``get_related_populators``,
``annotation_col_map``), so it is used only where one read is a large share of a hot page (the
request's user; the card page's showings; the learner's schedules; the show and rate POSTs'
latest showing), and ``CHECKED_DJANGO`` names the Django versions it was checked against:
tests/test_prepared_query.py fails on any other.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db import connections, models, router
from django.db.models.query import ModelIterable, get_related_populators
from django.db.models.sql.compiler import SQLCompiler

M = TypeVar("M", bound=models.Model)

# The Django versions (major, minor) whose ORM internals this was checked against.
CHECKED_DJANGO = {(5, 2)}


def _adapted(value: Any, connection: Any) -> Any:
    """A datetime as the database's adapter hands it to the driver (SQLite: naive UTC text)."""
    return connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime) else value


@dataclass(frozen=True)
class _Slot:
    name: str


@dataclass(frozen=True)
class _Plan:
    sql: str
    params: tuple[Any, ...]  # a _Slot where a call's value goes
    compiler: SQLCompiler  # its select, from which each connection's converters are worked out
    init_list: tuple[str, ...]  # the model's own columns, in the row's order
    fields: slice  # where they are in a row
    populators: tuple[Any, ...]  # select_related objects
    annotations: tuple[tuple[str, int], ...]


class PreparedQuery(Generic[M]):
    """``build(**stand_ins)`` returns a queryset of ``model`` instances; ``run(**values)`` its rows.

    Each stand-in is an int, a str or an aware datetime that no real value or constant of the
    query equals, so that every SQL parameter equal to one is the caller's value. It must reach
    the SQL as given (an int for an integer column, a str for a text one, a datetime for a
    datetime column): one the field converts otherwise is not found, and the build is refused.
    """

    def __init__(
        self, model: type[M], build: Callable[..., models.QuerySet[M]], **stand_ins: int | str | datetime
    ) -> None:
        self._model = model
        self._build = build
        self._stand_ins = stand_ins
        self._plans: dict[str, _Plan] = {}
        # Per database alias and connection object: (the connection, its columns' converters).
        self._converters: dict[tuple[str, int], tuple[Any, tuple[Any, ...]]] = {}

    def run(self, **values: Any) -> list[M]:
        if values.keys() != self._stand_ins.keys():
            raise TypeError(f"values for {sorted(self._stand_ins)} expected, got {sorted(values)}")
        database = router.db_for_read(self._model)
        plan = self._plans.get(database) or self._prepare(database)
        connection = connections[database]
        params = [
            _adapted(values[param.name], connection) if isinstance(param, _Slot) else param
            for param in plan.params
        ]
        converters = self._converters_of(plan, database, connection)
        with connection.cursor() as cursor:
            cursor.execute(plan.sql, params)
            rows = cursor.fetchall()
        instances = []
        for row in rows:
            if converters:  # as ``results_iter`` applies them
                row = list(row)
                for position, (functions, expression) in converters:
                    for function in functions:
                        row[position] = function(row[position], expression, connection)
            instance = self._model.from_db(database, plan.init_list, row[plan.fields])
            for populator in plan.populators:
                populator.populate(row, instance)
            for name, position in plan.annotations:
                setattr(instance, name, row[position])
            instances.append(instance)
        return instances

    def _converters_of(self, plan: _Plan, database: str, connection: Any) -> tuple[Any, ...]:
        """Django's value converters for the plan's columns on this connection, by position.

        Worked out once per connection object, not per call: asking every column's field and the
        backend for them is a large part of a one-row query's cost.
        """
        known = self._converters.get((database, id(connection)))
        if known is None or known[0] is not connection:  # an id reused by a new connection
            compiler = copy.copy(plan.compiler)
            compiler.connection = connection  # the converters are bound to this thread's connection
            columns = [column[0] for column in compiler.select[: compiler.col_count]]
            known = (connection, tuple(compiler.get_converters(columns).items()))
            self._converters[(database, id(connection))] = known
        return known[1]

    def _prepare(self, database: str) -> _Plan:
        queryset = self._build(**self._stand_ins).using(database)
        if queryset.model is not self._model or queryset._iterable_class is not ModelIterable:
            raise TypeError(
                f"the build made a queryset of {queryset.model.__name__} ({queryset._iterable_class.__name__}),"
                f" not of {self._model.__name__} instances"
            )
        compiler = queryset.query.get_compiler(using=database)
        sql, params = compiler.as_sql()  # fills compiler.select and klass_info
        by_value = {
            _adapted(value, connections[database]): _Slot(name) for name, value in self._stand_ins.items()
        }
        # True == 1 and hashes alike: a bool is never a stand-in's place.
        slotted = tuple(
            by_value.get(param, param)
            if isinstance(param, int | str | datetime) and not isinstance(param, bool)
            else param
            for param in params
        )
        missing = set(self._stand_ins) - {param.name for param in slotted if isinstance(param, _Slot)}
        if missing:
            raise ValueError(f"the query's SQL does not use the stand-ins of {sorted(missing)}")
        select_fields = compiler.klass_info["select_fields"]
        start, end = select_fields[0], select_fields[-1] + 1
        plan = _Plan(
            sql=sql,
            params=slotted,
            compiler=compiler,
            init_list=tuple(column[0].target.attname for column in compiler.select[start:end]),
            fields=slice(start, end),
            populators=tuple(get_related_populators(compiler.klass_info, compiler.select, queryset.db)),
            annotations=tuple(compiler.annotation_col_map.items()),
        )
        return self._plans.setdefault(database, plan)  # two threads that both built keep one
