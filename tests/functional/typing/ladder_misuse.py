"""Ladders that mypy must reject (each line marked with an expect-error comment) and legal ones it must accept.

Checked by ``tests/functional/typing/test_types.py``; never imported at runtime.
"""

from __future__ import annotations

from crux_devtools import context, droppable, match, offloadable, prefer, prompt, summarizable, when

full = context("catalog", system="full")
index = context("catalog-index", system="index")
emergency = context("catalog-emergency", system="call sales")

# Legal: every layer, any layer left out, lists as atomic sources, a tool output policy.
ok_complete = droppable(offloadable(summarizable(prefer(full, index))))
ok_partial = droppable(summarizable(full))
ok_offload = offloadable(prefer(full, index), above_tokens=4_000)
ok_list = summarizable([full, index])
ok_policy = offloadable(above_tokens=4_000)

bad_1 = summarizable(droppable(full))  # expect-error: droppable() is terminal
bad_2 = prefer(prefer(full, index), emergency)  # expect-error: prefer() cannot be nested
bad_3 = summarizable(offloadable(full))  # expect-error: offloadable() cannot move back to a summary rung
bad_4 = summarizable(summarizable(full))  # expect-error: summarizable() cannot be nested
bad_5 = droppable(droppable(full))  # expect-error: droppable() cannot be nested
bad_6 = prefer(full, summarizable(index))  # expect-error: alternatives must be exact sources
bad_7 = offloadable(droppable(full))  # expect-error: offloadable() cannot wrap a terminal ladder
bad_8 = offloadable(offloadable(full))  # expect-error: offloadable() cannot be nested
bad_9 = droppable(offloadable(above_tokens=10))  # expect-error: a tool output policy is not a source

# In ``use``: contexts, ladders, when/match and falsy flags are fine; a tool output policy is not.
DEBUG = False
ok_use = prompt("p", use=[full, droppable(summarizable(index)), when(lambda i: True, emergency), None, DEBUG and full])
ok_match = prompt("q", use=[match(lambda i: "a", {"a": full, "b": [index, droppable(emergency)]})])
ok_nested = context("outer", use=[offloadable(full), None])
bad_10 = prompt("r", use=[offloadable(above_tokens=4_000)])  # expect-error: a tool output policy is not a prompt ladder
bad_11 = context("s", use=[offloadable(above_tokens=4_000)])  # expect-error: nor a context entry
