"""A list answer kept as text (``_listing.Listing``) reads as ``json.loads`` reads it: the same
fields, the same entries in the same order, and the same texts refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import RUN_SLOW
from hypothesis import given, settings
from hypothesis import strategies as st

from platform_eval._listing import Listing

KEY = "evaluationItems"

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_answers = st.dictionaries(st.text(), _values, max_size=4).flatmap(
    lambda fields: st.tuples(
        st.just(fields),
        st.none() | st.lists(_values, max_size=6),
        st.sampled_from([None, 0, 2]),
        st.booleans(),
    )
)


@settings(max_examples=300 if RUN_SLOW else 40, deadline=None)
@given(_answers)
def test_a_listing_reads_what_json_loads_reads(answer: tuple[Any, ...]) -> None:
    fields, entries, indent, entries_first = answer
    fields = {name: value for name, value in fields.items() if name != KEY}
    body = dict(fields)
    if entries is not None:
        # Where the list sits among the other fields changes nothing.
        body = {KEY: entries, **fields} if entries_first else {**fields, KEY: entries}
    text = json.dumps(body, indent=indent, ensure_ascii=indent == 0)

    listing = Listing(text, KEY)

    assert listing.fields == fields
    assert list(listing.entries()) == (entries or [])


def test_the_next_page_token_is_read_wherever_it_stands() -> None:
    for text in (
        '{"nextPageToken": "t", "evaluationItems": [{"name": "a"}]}',
        '{ "evaluationItems" : [ {"name": "a"} ] , "nextPageToken" : "t" }',
    ):
        listing = Listing(text, KEY)
        assert listing.get("nextPageToken") == "t"
        assert list(listing.entries()) == [{"name": "a"}]
    assert Listing("{}", KEY).get("nextPageToken") is None


def test_a_list_key_inside_an_entry_is_an_entrys_content() -> None:
    text = '{"evaluationItems": [{"evaluationItems": [1], "nextPageToken": "inner"}]}'
    listing = Listing(text, KEY)
    assert listing.get("nextPageToken") is None
    assert list(listing.entries()) == [{"evaluationItems": [1], "nextPageToken": "inner"}]


def test_a_list_key_that_is_not_a_list_is_a_field() -> None:
    listing = Listing('{"evaluationItems": null}', KEY)
    assert list(listing.entries()) == []
    assert listing.get(KEY, "absent") is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        '{"evaluationItems": [',
        '{"evaluationItems": [{"name": "a"}',
        '{"evaluationItems": [{"name": "a"},]}',
        '{"evaluationItems": [{"name": "a"} {"name": "b"}]}',
        '{"a": 1,}',
        '{"a" 1}',
        "{1: 2}",
        '{"a": 1} trailing',
        '{"a": 1}{"b": 2}',
        '{"evaluationItems": [], "nextPageToken": }',
    ],
)
def test_what_json_loads_refuses_a_listing_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        Listing(text, KEY)


@pytest.mark.parametrize("text", ["[]", '"text"', "null", "1"])
def test_an_answer_that_is_not_an_object_is_refused(text: str) -> None:
    # A list method answers an object: anything else is no page at all.
    with pytest.raises(ValueError, match=r"expected '\{'"):
        Listing(text, KEY)
