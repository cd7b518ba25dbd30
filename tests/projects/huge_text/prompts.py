"""A 10 MB system text: the report must stay small and keep the true token count."""

from crux_devtools import prompt

huge = prompt("huge", system="lorem ipsum dolor sit amet " * 400_000)
