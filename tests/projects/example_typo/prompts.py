"""A prompt whose example has a misspelt field and a value of the wrong type."""

from pydantic import BaseModel

from crux_devtools import prompt


class Ticket(BaseModel):
    message: str
    count: int = 1


tickets = prompt(
    "tickets",
    system="Triage support tickets.",
    input=Ticket,
    examples={
        "fine": {"message": "The printer is on fire"},
        "typo": {"mesage": "The printer is on fire", "count": "abc"},
    },
)
