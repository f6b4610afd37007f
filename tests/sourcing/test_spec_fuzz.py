"""Property tests of suite specs and every file a spec names: accepted because valid (by an oracle written
here), or refused with the reader's one-line error naming the file; never another exception."""
from __future__ import annotations

import codecs
import datetime as dt
import shutil

import pytest
import yaml
from hypothesis import assume, given
from hypothesis import strategies as st
from input_support import fuzz, one_line_naming
from sqlalchemy.engine import make_url
from suite_support import copy_suite

from evalsuite.core.io import MAX_DEPTH, MAX_NODES
from evalsuite.deid.rules import DeidError, load_rules
from evalsuite.sourcing.policies import PolicyError, load_policy
from evalsuite.sourcing.quality import QualityConfigError, load_expectations
from evalsuite.sourcing.rights import RightsError, load_manifest
from evalsuite.sourcing.spec import SpecError, SuiteSpec, load_spec

INPUT_ERRORS = (SpecError, RightsError, DeidError, PolicyError, QualityConfigError)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return copy_suite(tmp_path_factory.mktemp("template") / "suite")


@pytest.fixture
def fresh(template, tmp_path):
    """Makes a fresh copy of the AP suite per call (one per hypothesis example); returns its spec."""
    count = iter(range(10**9))

    def copy():
        dest = tmp_path / f"s{next(count)}"
        shutil.copytree(template.parent, dest)
        return dest / template.name

    return copy


@pytest.fixture
def suite(fresh):
    return fresh()


def answer(fn, path, *args):
    """fn's result, or None when it refused in one line naming `path` with one of the input errors."""
    try:
        return fn(path, *args)
    except INPUT_ERRORS as exc:
        one_line_naming(str(exc), path)
        return None


def raw_spec(spec) -> dict:
    return yaml.safe_load(spec.read_text())


def write_spec(spec, raw) -> None:
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))


LOADERS = {"rights.yaml": load_manifest, "deid.yaml": load_rules, "quality.yaml": load_expectations}


# ---------------------------------------------------------------- any bytes, any text

@fuzz(60)
@given(data=st.binary(max_size=200), name=st.sampled_from(["spec", "rights.yaml", "deid.yaml", "quality.yaml",
                                                            "policy.md"]))
def test_any_bytes_in_any_file_a_spec_names_are_one_line(fresh, data, name):
    suite = fresh()
    if name == "spec":
        path, fn = suite, load_spec
    elif name == "policy.md":
        path, fn = suite.parent / "ap_exceptions" / name, load_policy
    else:
        path, fn = suite.parent / "ap_exceptions" / name, LOADERS[name]
    path.write_bytes(data)
    answer(fn, path)


@fuzz(60)
@given(text=st.text(max_size=120), name=st.sampled_from(sorted(LOADERS)))
def test_text_that_is_not_yaml_is_refused_naming_the_file(fresh, text, name):
    suite = fresh()
    path = suite.parent / "ap_exceptions" / name
    path.write_text(text, encoding="utf-8")
    got = answer(LOADERS[name], path)
    try:  # the oracle: PyYAML's own safe loader
        yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        assert got is None


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "latin-1", "cp1252"])
def test_a_spec_in_another_encoding_names_it(suite, codec):
    suite.write_bytes((suite.read_text() + "# café\n").encode(codec))
    message = one_line_naming(_refusal(load_spec, suite), suite)
    assert "not UTF-8 text" in message
    if codec == "utf-16":
        assert f"{suite}:1: not UTF-8 text (UTF-16 byte-order mark)" in message


def _refusal(fn, *args) -> str:
    with pytest.raises(INPUT_ERRORS) as caught:
        fn(*args)
    return str(caught.value)


# ---------------------------------------------------------------- dates, integers, depth, aliases

@fuzz(80)
@given(year=st.integers(1990, 2100), month=st.integers(0, 14), day=st.integers(0, 33))
def test_a_date_is_accepted_only_if_it_is_on_the_calendar(fresh, year, month, day):
    suite = fresh()
    rights = suite.parent / "ap_exceptions" / "rights.yaml"
    rights.write_text(rights.read_text().replace("expires: 2027-12-31", f"expires: {year}-{month:02d}-{day:02d}"))
    try:
        expected = dt.date(year, month, day)
    except ValueError:
        expected = None
    got = answer(load_manifest, rights)
    assert (got.expires if got else None) == expected


@fuzz(40)
@given(value=st.integers(-2**80, 2**80))
def test_integers_beyond_64_bits_are_refused_naming_the_line(fresh, value):
    suite = fresh()
    raw = raw_spec(suite)
    raw["derivation"]["seed"] = value
    write_spec(suite, raw)
    got = answer(load_spec, suite)
    if -2**63 <= value < 2**63:
        assert got is not None and got.derivation.seed == value
    else:
        assert got is None and "does not fit a 64-bit integer" in _refusal(load_spec, suite)


@fuzz(30)
@given(depth=st.integers(1, 4000))
def test_nesting_is_bounded_and_never_overflows_the_parser(fresh, depth):
    suite = fresh()
    quality = suite.parent / "ap_exceptions" / "quality.yaml"
    quality.write_text("invoices: {value_sets: {status: " + "[" * depth + "]" * depth + "}}\n")
    message = _refusal(load_expectations, quality) if depth > 1 else None
    if 3 + depth > MAX_DEPTH:  # the mapping, invoices, value_sets, then the lists
        assert f"nested deeper than {MAX_DEPTH} levels" in message
    elif message is not None:  # within the bound a nested list is judged as a value set, and refused as one
        assert "nested deeper" not in message and message.startswith(f"{quality}: invoices.value_sets.status")


@fuzz(30)
@given(width=st.integers(1, 12), levels=st.integers(1, 9))
def test_aliases_are_followed_only_up_to_a_bound(fresh, width, levels):
    """A value set built from nested aliases: refused once its expansion passes MAX_NODES, whatever it holds."""
    suite = fresh()
    text = "anchors:\n  l0: &l0 [" + ", ".join(["USD"] * width) + "]\n"
    for i in range(1, levels):
        text += f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]\n"
    quality = suite.parent / "ap_exceptions" / "quality.yaml"
    quality.write_text(text)
    lists = [1 + width]  # the oracle: each list counts itself and what its aliases expand to
    for _ in range(1, levels):
        lists.append(1 + width * lists[-1])
    expanded = 3 + sum(1 + n for n in lists)  # the document, `anchors` and its mapping, then each key and list
    message = _refusal(load_expectations, quality)  # `anchors` is no table of the spec either way
    if expanded > MAX_NODES:
        assert "through aliases" in message
    else:
        assert "through aliases" not in message


def test_an_alias_that_contains_itself_is_refused(suite):
    quality = suite.parent / "ap_exceptions" / "quality.yaml"
    quality.write_text("invoices: &a {required: [*a]}\n")
    assert "an alias refers to a value that contains it" in _refusal(load_expectations, quality)


# ---------------------------------------------------------------- keys, tables, domains, URLs

FIELDS = sorted(SuiteSpec.model_fields)


@fuzz(40)
@given(unknown=st.from_regex(r"[a-z]{3,10}", fullmatch=True), drop=st.sampled_from(FIELDS + [None]))
def test_an_unknown_key_is_named_even_when_a_required_key_is_missing(fresh, unknown, drop):
    suite = fresh()
    raw = raw_spec(suite)
    assume(unknown not in SuiteSpec.model_fields)
    raw[unknown] = 1
    raw.pop(drop, None)
    write_spec(suite, raw)
    assert _refusal(load_spec, suite).startswith(f"{suite}: {unknown}: unknown key")


@fuzz(40)
@given(name=st.text(max_size=12))
def test_a_table_name_is_a_plain_identifier(fresh, name):
    suite = fresh()
    raw = raw_spec(suite)
    raw["sources"]["tables"][name] = dict(raw["sources"]["tables"]["payments"])  # a table no other file names
    write_spec(suite, raw)
    got = answer(load_spec, suite)
    identifier = name.isidentifier() and name.isascii()
    assert (got is not None) == identifier


@pytest.mark.parametrize("table", ["vendor_master", "invoices", "exception_queue"])
def test_a_table_the_quality_file_still_names_is_refused_when_the_spec_is_read(suite, table):
    raw = raw_spec(suite)
    raw["sources"]["tables"].pop(table)
    write_spec(suite, raw)
    quality = suite.parent / "ap_exceptions" / "quality.yaml"
    message = one_line_naming(_refusal(load_spec, suite), quality)
    assert f"table {table!r} is not among the tables of {suite}" in message


@pytest.mark.parametrize("domain", ["payroll", "", "AP_EXCEPTIONS"])
def test_an_unknown_domain_is_refused_when_the_spec_is_read(suite, domain):
    raw = raw_spec(suite)
    raw["domain"] = domain
    write_spec(suite, raw)
    assert _refusal(load_spec, suite).startswith(f"{suite}: domain: unknown domain")


def url_oracle(url: str, folder) -> bool:
    """Opening the URL would work: SQLAlchemy parses it, its dialect and driver import, a SQLite file exists."""
    try:
        parsed = make_url(url)
        dialect = parsed.get_dialect()
        dialect.import_dbapi()
    except Exception:  # noqa: BLE001 - the oracle only asks whether it works at all
        return False
    db = parsed.database
    return parsed.get_backend_name() != "sqlite" or db in (None, "", ":memory:") or (folder / db).is_file()


URLS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["sqlite://", "sqlite:///:memory:", "sqlite:///exists.db", "sqlite:///missing.db",
                     "sqlite:////no/such/dir/x.db", "postgresql://u@h/db", "mysql+pymysql://u@h/db",
                     "nosuchdb://x", "::", "sqlite", "http://example.com"]),
    st.builds(lambda scheme, rest: f"{scheme}://{rest}", st.sampled_from(["sqlite", "postgresql", "oracle", "x"]),
              st.text(max_size=12)))


@fuzz(80)
@given(url=URLS)
def test_a_database_url_is_accepted_only_if_it_can_be_opened(fresh, url, monkeypatch):
    suite = fresh()
    monkeypatch.chdir(suite.parent)  # SQLAlchemy resolves a relative SQLite path against the working folder
    (suite.parent / "exists.db").write_bytes(b"")
    raw = raw_spec(suite)
    raw["sources"]["tables"]["payments"] = {"url": url, "query": "select 1"}
    write_spec(suite, raw)
    got = answer(load_spec, suite)
    assert (got is not None) == url_oracle(url, suite.parent), url


@pytest.mark.parametrize("name, body, expected", [
    ("rights.yaml", "- a\n", "<top level>: expected a mapping, got list"),
    ("deid.yaml", "tables: 3\n", "tables: Input should be a valid dictionary"),
    ("quality.yaml", "invoices: [1]\n", "invoices: Input should be a valid dictionary"),
    ("quality.yaml", "42\n", "<top level>: expected a mapping, got int"),
])
def test_an_auxiliary_file_of_the_wrong_shape_names_file_and_field(suite, name, body, expected):
    path = suite.parent / "ap_exceptions" / name
    path.write_text(body)
    assert _refusal(LOADERS[name], path).startswith(f"{path}: {expected}")


@pytest.mark.parametrize("body, expected", [
    (codecs.BOM_UTF16_LE + "---\n".encode("utf-16-le"), ":1: not UTF-8 text (UTF-16 byte-order mark)"),
    (b"---\ndoc: ''\nversion: v1\neffective_from: 2026-01-01\n---\n## AP-1 X\nx\n", ": doc: String should have"),
    (b"---\ndoc: d\nversion: v1\neffective_from: 2026-02-30\n---\n## AP-1 X\nx\n",
     ":4: invalid YAML in front matter: 2026-02-30: day is out of range for month"),
    (b"---\r\ndoc: d\r\nversion: v1\r\neffective_from: 2026-01-01\r\n---\r\n## AP-1 X\r\nx\r\n", None),
])
def test_a_policy_is_read_as_utf8_and_checked_when_the_spec_is_read(suite, body, expected):
    policy = suite.parent / "ap_exceptions" / "p.md"
    policy.write_bytes(body)
    raw = raw_spec(suite)
    raw["policies"].append("ap_exceptions/p.md")
    write_spec(suite, raw)
    if expected is None:  # a file saved with Windows line ends reads as the same policy
        assert load_policy(policy).doc == "d" and load_spec(suite)
    else:
        assert _refusal(load_spec, suite).startswith(f"{policy}{expected}")
