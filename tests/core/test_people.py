"""Names to people: every spelling of one person is one key, and different people keep different keys."""
from __future__ import annotations

import pytest

from evalsuite.core.people import PersonNameError, person_key

# the twelve spellings of one reviewer that counted as a second reviewer (issue 25), and a few more
SPELLINGS = {
    "plain": "ann", "capital": "Ann", "shouted": "ANN", "padded": "  ann ", "zero-width space": "an\u200bn",
    "Cyrillic а": "\u0430nn", "full width": "\uff41\uff4e\uff4e", "trailing stop": "ann.", "soft hyphen": "an\u00adn",
    "RTL mark": "\u200fann", "counter": "ann (2)", "combining accent": "a\u0301nn",
    "zero-width joiner": "ann\u200d", "BOM": "\ufeffann", "math bold": "\U0001d41a\U0001d427\U0001d427",
    "Cyrillic А": "\u0410NN", "hyphenated counter": "ann-3", "bracketed": "ann [2]",
}


@pytest.mark.parametrize("how", list(SPELLINGS))
def test_every_spelling_of_one_name_is_one_person(how):
    assert person_key(SPELLINGS[how]) == person_key("ann") == "ann"


def test_grace_five_ways_is_one_person():
    assert {person_key(n) for n in ("Grace", "grace", "GRACE", "Grace.", "Gr\u0430ce")} == {"grace"}


def test_different_people_stay_different():
    people = ["Ann", "Anna", "Ian", "Dan", "Ann Lee", "Grace", "Grace Hopper", "Jürgen", "Jurgena", "Zoë", "Zoe Ng",
              "Иван", "李", "Ada Lovelace", "lan"]
    assert len({person_key(p) for p in people}) == len(people)
    assert person_key("Okonkwo-Bright, Marguerite") == person_key("okonkwo bright marguerite")


@pytest.mark.parametrize("name", ["", "   ", "...", "\u200b\u200f"])
def test_a_name_with_no_letter_or_digit_names_nobody(name):
    with pytest.raises(PersonNameError, match="has no letter or digit"):
        person_key(name)
