from pydantic import BaseModel

from crux_devtools import prompt


class Order(BaseModel):
    order_id: int


def shout(i):
    raise ValueError("no shouting allowed")


orders = prompt("orders", system="Help with orders.", input=Order,
                examples={"good": {"order_id": 7}, "bad": {"order_id": "seven"}})
loud = prompt("loud", system=shout)
