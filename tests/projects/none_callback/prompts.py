"""A system callback that returns None: the fault is reported at the callback, not at examples=."""

from crux_devtools import context, prompt


def forgot_to_return(_input):
    text = "## Greeting\nSay hello."
    text.strip()  # the author meant `return text`


greeting = context("greeting", system=forgot_to_return)

hello = prompt(
    "hello",
    system="You are polite.",
    use=[greeting],
    examples={"default": {}},
)
