"""The spec's domain, resolved for it, and the spec checked against it before any stage runs: every source table is
one the domain has, and every source column one its table has. Kept out of sourcing.spec, which every stage imports:
looking the domain up there would make each stage's code version depend on every module of the domain
(pipeline.code_versions)."""
from __future__ import annotations

from evalsuite.core.domain_refs import is_file_ref
from evalsuite.domains.package import DomainPackage
from evalsuite.domains.registry import resolve
from evalsuite.sourcing.headers import file_columns
from evalsuite.sourcing.snapshot import read_query
from evalsuite.sourcing.spec import SpecError, SuiteSpec, TableSource


def domain_tables(package: DomainPackage) -> dict[str, list[str] | None]:
    """The tables a source may be for, each with its columns: the world's tables (the user's device's too, in a
    dual-control domain), and the case tables the derivation reads (columns None: it reads the ones it names)."""
    domain, user = package.domain, package.user_domain
    tables = domain.tables | (user.tables if user is not None else {})
    return {n: [c.name for c in t.columns] for n, t in tables.items()} | dict.fromkeys(domain.case_tables)


def column_problem(spec: SuiteSpec, table: str, columns: list[str], known: list[str] | None) -> str | None:
    """Columns a source table has that its world table (`known`) lacks, named; None when every one has a place.
    Refused, not dropped: a column nobody declared is data the rights review and the personal-data scan never
    cleared."""
    extra = [c for c in columns if known is not None and c not in known]
    if not extra:
        return None
    return (f"column(s) {extra} are not columns of table {table} in domain {spec.domain} "
            f"(its columns: {', '.join(known)})")


def domain_for(spec: SuiteSpec, columns: dict[str, tuple[str, list[str]]] | None = None) -> DomainPackage:
    """The spec's domain (registry.resolve, relative to the spec); a declarative domain file is bound to the
    columns its tables' sources have (`columns`, when the caller has read them already)."""
    if not is_file_ref(spec.domain):
        return resolve(spec.domain, spec.base_dir)
    columns = columns if columns is not None else source_columns(spec)
    return resolve(spec.domain, spec.base_dir, {name: cols for name, (_, cols) in columns.items()})


def source_columns(spec: SuiteSpec) -> dict[str, tuple[str, list[str]]]:
    """Each source table's columns, with where they were read for error lines: a file's from its header or
    Parquet schema, a SQL source's from its query asked for no rows."""
    out = {}
    for name, src in spec.sources.tables.items():
        if src.path:
            where = f"{spec.resolve(src.path)}: sources.tables.{name}"
            out[name] = where, file_columns(spec.resolve(src.path), where, SpecError)
        else:
            out[name] = f"{spec.spec_file or spec.name}: sources.tables.{name}", _query_columns(name, src, spec)
    return out


def check_sources(spec: SuiteSpec) -> None:
    """Every source table is one of the domain's, and its columns are the table's; a SpecError naming the file or
    spec otherwise. Each source's columns are read once, for the check and for binding a declarative domain."""
    path = spec.spec_file or spec.name
    columns = source_columns(spec)
    known = domain_tables(domain_for(spec, columns))
    for name in spec.sources.tables:
        if name not in known:
            raise SpecError(f"{path}: sources.tables.{name}: not a table of domain {spec.domain} "
                            f"(its tables: {', '.join(sorted(known))})")
        where, cols = columns[name]
        if problem := column_problem(spec, name, cols, known[name]):
            raise SpecError(f"{where}: {problem}")


def _query_columns(name: str, src: TableSource, spec: SuiteSpec) -> list[str]:
    """The columns a SQL source's query returns, asked for no rows (so nothing personal is read here)."""
    empty = src.model_copy(update={"query": f"SELECT * FROM ({src.query.strip().rstrip(';')}) AS source WHERE 1 = 0"})
    return [str(c) for c in read_query(name, empty, spec).columns]
