"""The Web API's form parser reads every query string and form body as ``parse_qsl`` does."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote_plus, urlencode

from hypothesis import given, settings
from hypothesis import strategies as st

from ancha.world.tools.slack.params import form_pairs
from ancha.world.tools.slack.params import unquote_plus as fast_unquote_plus

_PIECES = st.lists(st.sampled_from(["a", "b", "=", "&", "+", "%", "%2", "%41", "%e2%9c%93", "%C3", "%zz", " ",
                                    "é", "✓", ";", "text", "channel", "%3D", "%26", "%2B", "%aF", "%E2%82", "€", "%", ""]), max_size=12)


@settings(max_examples=500, deadline=None)
@given(pieces=_PIECES)
def test_form_pairs__are_parse_qsl_with_blank_values(pieces):
    text = "".join(pieces)
    assert form_pairs(text) == parse_qsl(text, keep_blank_values=True)


@settings(max_examples=200, deadline=None)
@given(args=st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=5))
def test_form_pairs__read_back_what_urlencode_wrote(args):
    text = urlencode(args)
    assert form_pairs(text) == parse_qsl(text, keep_blank_values=True)
    assert dict(form_pairs(text)) == args


@settings(max_examples=500, deadline=None)
@given(text=st.lists(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(
    ["%", "+", "%C3", "%a9", "%E2%82%AC", "%F0%9F", "%zz", "%4"]), max_size=20).map("".join))
def test_unquote_plus__decodes_as_the_standard_library_does(text):
    assert fast_unquote_plus(text) == unquote_plus(text)
