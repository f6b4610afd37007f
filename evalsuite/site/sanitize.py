"""What must never reach the public site: original personal values of a suite's seed, and configured secrets.

The originals come from where the pipeline keeps them: the suite's seed snapshot (the records before
de-identification) and its de-identification record `deid.json`, whose per-column counts say which
columns were pseudonymised, replaced, generalised or dropped. The values of those columns are what the
residual check (`evalsuite.deid.residual`) looks for in the de-identified tables; the site build looks
for the same values, the same way (case-insensitive, whole words), in every file it would ship.
"""
from __future__ import annotations

import base64
import binascii
import html
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pandas as pd
import pyarrow.parquet as pq
from pydantic import ValidationError

from evalsuite.core.hashing import canon
from evalsuite.core.io import one_line, parse_json, read_text
from evalsuite.core.people import latin_lookalike
from evalsuite.core.pii import ValueIndex
from evalsuite.deid.rules import HIDING_RULES
from evalsuite.deid.transform import ColumnCount

# Environment variables whose values are secrets wherever they appear (names like these, and these two).
SECRET_NAMES = re.compile(r".*_(KEY|TOKEN|SECRET)$")
NAMED_SECRETS = ("EVALSUITE_DEID_KEY", "OPENAI_API_KEY")
MIN_SECRET_LEN = 8  # a "1" or "yes" in a *_TOKEN variable is a flag, not a secret, and occurs everywhere by chance
# Files whose bytes are text the scan can read; plots are PNG drawn from numbers and names the JSON beside them holds.
TEXT_SUFFIXES = {".html", ".json", ".js", ".css", ".svg", ".txt", ".md"}


class SiteError(RuntimeError):
    """A site that cannot be built or would leak; the message is one line naming the file and what is wrong."""


@dataclass
class Originals:
    """The original personal values of one suite, filed by the column they came from."""

    suite: str
    index: ValueIndex = field(default_factory=lambda: ValueIndex().freeze())
    columns: list[str] = field(default_factory=list)  # "table.column (rule)" of every hiding rule applied
    method: dict | None = None  # the de-identification provenance (method, date, rule-set hash, counts)


def suite_work_folder(release_path: Path, suite: str) -> Path:
    """Where a release's suite keeps its seed and records: `<home>/suites/<suite>` beside `<home>/releases`.

    This is the layout of `evalsuite.pipeline.paths.Paths`, which ranks beside this package and so
    cannot be imported here; the Dagster asset passes its Paths folders instead of calling this.
    """
    return Path(release_path).resolve().parents[2] / "suites" / suite


def load_originals(suite: str, seed_dir: Path, deid_report: Path) -> Originals:
    """The values that must not reappear, read from the seed snapshot's columns that deid.json says were hidden."""
    if not deid_report.is_file():
        raise SiteError(f"{deid_report}: no de-identification record for suite {suite}, so the site cannot be "
                        "checked for original personal values; build the suite in this home first")
    record = parse_json(read_text(deid_report, SiteError), str(deid_report), SiteError)
    provenance = record.get("provenance") if isinstance(record, dict) else None
    if not provenance:  # the rights review found no personal columns: nothing was de-identified
        return Originals(suite=suite)
    try:
        counts = [ColumnCount.model_validate(c) for c in provenance["counts"]]
    except (KeyError, TypeError, ValidationError) as exc:
        raise SiteError(f"{deid_report}: provenance.counts: not the per-column record of a de-identification "
                        f"({one_line(str(exc))[:200]})") from exc
    hidden = sorted({(c.table, c.column, c.rule) for c in counts if c.rule in HIDING_RULES})
    index = ValueIndex(disguised=True)  # spaced, dotted, split or spelled out, still theirs
    for table in sorted({t for t, _, _ in hidden}):
        cols = [c for t, c, _ in hidden if t == table]
        frame = _seed_columns(seed_dir, table, cols)
        for col in cols:
            for value in pd.unique(frame[col].dropna()):
                index.add(canon(value), "", f"{table}.{col}")
    return Originals(suite=suite, index=index.freeze(), columns=[f"{t}.{c} ({r})" for t, c, r in hidden],
                     method={k: v for k, v in provenance.items() if k != "counts"} | {"columns": len(hidden)})


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
# Runs that may encode a text: base64 (standard or URL-safe alphabet, 12 characters = 9 bytes and up) and hex
# (8 bytes and up). Most such runs on a page are hashes and ids, which decode to no text and are dropped.
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")


def _readable(text: str) -> str:
    """The text and the same text with HTML entities and JSON \\u escapes undone (Jinja's tojson escapes
    quotes and brackets): an "O'Brien" shipped as O&#39;Brien or O\\u0027Brien is still found."""
    plain = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), html.unescape(text))
    return text if plain == text else f"{text}\n{plain}"


def views(text: str) -> list[str]:
    """The ways a page's text can be read, each scanned: as shipped (escapes undone, _readable) and percent-decoded
    (`zed.quill%40protonmail.ch`), each in plain Latin letters (a Cyrillic "а" in a name, full-width letters:
    core.people.latin_lookalike, which also case-folds), and the text that its base64 and hex runs decode to.
    Reversed text, case, spacing and separators are the index's business (_scan_index, ValueIndex disguised)."""
    shown = _readable(text)
    out = [shown] + ([unquote(shown)] if "%" in shown else [])
    decoded = [t for m in _BASE64.finditer(shown) if (t := _decoded(m.group(), _from_base64))]
    decoded += [t for m in _HEX.finditer(shown) if (t := _decoded(m.group(), bytes.fromhex))]
    return [latin_lookalike(t) for t in out + (["\n".join(decoded)] if decoded else [])]


def _from_base64(run: str) -> bytes:
    run = run.rstrip("=")
    return base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run) % 4), validate=True)


def _decoded(run: str, decode: Callable[[str], bytes]) -> str | None:
    """The text a run decodes to, or None: it does not decode, or not to printable UTF-8 text."""
    try:
        text = decode(run).decode("utf-8")
    except (ValueError, binascii.Error):  # UnicodeDecodeError is a ValueError
        return None
    return text if text.isprintable() else None


def _seed_columns(seed_dir: Path, table: str, columns: list[str]) -> pd.DataFrame:
    path = seed_dir / f"{table}.parquet"
    if not path.is_file():
        raise SiteError(f"{path}: the seed snapshot has no table {table}, which deid.json says was de-identified")
    return pq.read_table(path, columns=columns).to_pandas()


def configured_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variable name -> value of every configured secret in the environment."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items()
            if (k in NAMED_SECRETS or SECRET_NAMES.fullmatch(k)) and len(v.strip()) >= MIN_SECRET_LEN}


def check_folder(folder: Path, originals: Iterable[Originals], secrets: Mapping[str, str],
                 tick: Callable[[], None] = lambda: None, answers: Iterable[Any] = ()) -> int:
    """Raise SiteError naming the first file that holds an original value, a secret or a value of a hidden answer
    (answers: evalsuite.site.answers.AnswerValues, each with an index whose sources say which task and which part
    of its answers); returns files scanned.

    The error names the column, variable or task, never the value: the message may itself be published in a log.
    """
    index = _scan_index(originals, secrets, answers)
    scanned = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder)
        tick()
        if path.suffix not in TEXT_SUFFIXES:
            if path.suffix != ".png":
                raise SiteError(f"{rel}: unexpected file type in the site; only text files and PNG plots ship")
            continue
        scanned += 1
        for text in views(path.read_text(encoding="utf-8")):
            low = text.lower()
            for name, value in sorted(secrets.items()):
                if value.lower() in low:  # inside a longer word too: a key has no word boundaries to respect
                    raise SiteError(f"{rel}: holds the value of the configured secret {name}; nothing was written")
            for _, _, _, what in index.finditer(text):
                raise SiteError(f"{rel}: {what}; nothing was written")
    return scanned


def _scan_index(originals: Iterable[Originals], secrets: Mapping[str, str], answers: Iterable[Any]) -> ValueIndex:
    """One index of everything the scan looks for, each value filed under what the error says it is, so each
    reading of a page (views) is matched once: disguised, as a key upper-cased or split by separators is still the
    key, and each value also in plain Latin letters, as the readings are, and reversed."""
    found = [(value, f"holds the value of the configured secret {name}") for name, value in sorted(secrets.items())]
    found += [(value, f"holds an original personal value of {source} (suite {o.suite})") for o in originals
              for value, _, source in o.index.items()]
    found += [(value, f"holds {source}, suite {a.suite}: an answer no public page may show") for a in answers
              for value, _, source in a.index.items()]
    index = ValueIndex(disguised=True)
    for value, what in found:
        for form in dict.fromkeys((value, latin_lookalike(value))):
            index.add(form, "", what)
            index.add(form[::-1], "", what)
    return index.freeze()
