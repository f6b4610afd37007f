"""Issue 25: the site's leak scan finds original personal values however they are disguised (it missed 18 of 30)."""
from __future__ import annotations

import pytest

from evalsuite.core.pii import ValueIndex
from evalsuite.site.sanitize import Originals, SiteError, check_folder

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
