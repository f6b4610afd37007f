"""Issues 25 and 40: the site's leak scan finds original personal values, configured secrets, held-out ids and
hidden answers however they are disguised (it missed 18 of 30, then 7 of 30: a homoglyph name, `%40` in an e-mail,
the key upper-cased, in base64, hex, reversed or split), and finds nothing on the pages of an honest site."""
from __future__ import annotations

import base64
from urllib.parse import quote

import pytest
from suite_support import DEMO_KEY

from evalsuite.core.pii import ValueIndex
from evalsuite.site.answers import answer_keys
from evalsuite.site.inputs import collect
from evalsuite.site.sanitize import Originals, SiteError, check_folder, load_originals, suite_work_folder

ORIGINALS = {"vendor_master.contact_name": "Marguerite Okonkwo-Bright",
             "vendor_master.email": "zed.quill@protonmail.ch", "vendor_master.bank_account": "GB82WEST12345698765432",
             "vendor_master.phone": "415-555-2671"}


@pytest.mark.parametrize("disguised, source", [
    ("m a r g u e r i t e  o k o n k w o - b r i g h t", "contact_name"),
    ("Okonkwo-Bright, Marguerite", "contact_name"), ("MARGUERITE\nOKONKWO BRIGHT", "contact_name"),
    ("zed dot quill at protonmail dot ch", "email"), ("zed.quill [at] protonmail.ch", "email"),
    ("gb82 west 1234 5698 7654 32", "bank_account"), ("G.B.8.2.W.E.S.T.1.2.3.4.5.6.9.8.7.6.5.4.3.2", "bank_account"),
    ("(415) 555 2671", "phone"), ("4155552671", "phone"),
])
def test_a_disguised_original_value_stops_the_site_naming_its_column_not_the_value(tmp_path, disguised, source):
    index = ValueIndex(disguised=True)
    for column, value in ORIGINALS.items():
        index.add(value, "", column)
    (tmp_path / "trace.json").write_text(f'{{"final_message": "Resolved; told {disguised} by mail."}}')
    with pytest.raises(SiteError, match=f"original personal value of vendor_master.{source} ") as err:
        check_folder(tmp_path, [Originals(suite="ap_exceptions", index=index.freeze())], {})
    assert disguised not in str(err.value)


def test_words_that_only_share_letters_with_an_original_pass(tmp_path):
    index = ValueIndex(disguised=True)
    index.add("Roberto Davis", "", "vendor_master.contact_name")
    (tmp_path / "page.html").write_text("<p>Robertodavisson, Davis Roberts and Robert Davies; roberto alone.</p>")
    assert check_folder(tmp_path, [Originals(suite="ap_exceptions", index=index.freeze())], {}) == 1


KEY = "sk-live-7f3a9c2e11d04b"  # a configured secret, ACME_API_TOKEN
NAME, EMAIL, IBAN = ORIGINALS["vendor_master.contact_name"], ORIGINALS["vendor_master.email"], ORIGINALS[
    "vendor_master.bank_account"]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _hex(text: str) -> str:
    return text.encode().hex()


def _percent(text: str) -> str:
    """Every byte percent-encoded, as a URL may carry it."""
    return "".join(f"%{b:02X}" for b in text.encode())


# (what a page holds, what the scan must say it is); {held} and {body}: a held-out task's id and a message body of
# a test task's reference solution, from the real release.
DISGUISES = [
    ("Маrguеritе Оkonkwо-Вright", "contact_name"),  # Cyrillic М, а, е, О, о, В
    ("Ｍａｒｇｕｅｒｉｔｅ Ｏｋｏｎｋｗｏ-Ｂｒｉｇｈｔ", "contact_name"),  # full width
    ("Marguérite Okonkwo-Bright", "contact_name"), ("Margue\u200brite Okonkwo\u00adBright", "contact_name"),
    (NAME[::-1], "contact_name"), (_b64(NAME), "contact_name"), (_hex(NAME), "contact_name"),
    (quote(NAME), "contact_name"), ("&#77;arguerite Okonkwo&#45;Bright", "contact_name"),
    ("MARGUERITE_OKONKWO_BRIGHT", "contact_name"),
    (EMAIL.replace("@", "%40"), "email"), (EMAIL.upper(), "email"), (_b64(EMAIL), "email"), (_hex(EMAIL), "email"),
    (EMAIL[::-1], "email"), (_percent(EMAIL), "email"), ("zеd.quill@protonmail.ch", "email"),
    ("gb82-west-1234-5698-7654-32", "bank_account"), (_b64(IBAN), "bank_account"), (IBAN[::-1], "bank_account"),
    ("415.555.2671", "phone"),
    (KEY.upper(), "ACME_API_TOKEN"), (_b64(KEY), "ACME_API_TOKEN"), (_hex(KEY), "ACME_API_TOKEN"),
    (KEY[::-1], "ACME_API_TOKEN"), ("sk live 7f3a 9c2e 11d0 4b", "ACME_API_TOKEN"), (_percent(KEY), "ACME_API_TOKEN"),
    ("{held_upper}", "the id of a held-out task"), ("{held_b64}", "the id of a held-out task"),
    ("{held_reversed}", "the id of a held-out task"),
    ("{body_split}", "an argument of the reference solution of task"),
    ("{body_homoglyph}", "an argument of the reference solution of task"),
]


@pytest.fixture(scope="module")
def scan(published):
    """What the scan looks for in the real release (its answer key, its originals) and in ORIGINALS and KEY."""
    release, _, site, _, home = published
    tasks = release.tasks()
    held = next(t for t in tasks if t.split == "held_out").task_id
    body = next(c.arguments["body"] for t in tasks if t.split == "test" for c in t.solution_calls()
                if c.tool == "message_vendor")
    index = ValueIndex(disguised=True)
    for column, value in ORIGINALS.items():
        index.add(value, "", column)
    fill = {"held_upper": held.upper(), "held_b64": _b64(held), "held_reversed": held[::-1],
            "body_split": "_".join(body.split()), "body_homoglyph": body.replace("o", "о").replace("a", "а")}
    answers = [k.values for k in answer_keys(collect([release.path])).values()]
    work = suite_work_folder(release.path, "ap_exceptions")
    return fill, [Originals(suite="ap_exceptions", index=index.freeze()),
                  load_originals("ap_exceptions", work / "seed", work / "deid.json")], answers, site


@pytest.mark.parametrize("disguised, what", DISGUISES)
def test_every_disguise_stops_the_site_naming_what_it_is_not_the_value(scan, tmp_path, disguised, what):
    fill, originals, answers, _ = scan
    text = disguised.format(**fill)
    (tmp_path / "trace.json").write_text(f'{{"final_message": "Resolved; told {text} by mail."}}')
    with pytest.raises(SiteError, match=what) as err:
        check_folder(tmp_path, originals, {"ACME_API_TOKEN": KEY}, answers=answers)
    assert text not in str(err.value)


def test_the_pages_of_an_honest_site_raise_no_alarm(scan):
    """The demo's site (release page, scorecard, every trace replay): each of its readings scanned, nothing found."""
    _, originals, answers, site = scan
    files = [p for p in site.rglob("*") if p.is_file() and p.suffix != ".png"]
    assert check_folder(site, originals, {"EVALSUITE_DEID_KEY": DEMO_KEY}, answers=answers) == len(files) > 100
