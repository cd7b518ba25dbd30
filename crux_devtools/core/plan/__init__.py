"""Plan: composed parts made into one request that fits.

Takes a composed target (a prompt, or an ``agent`` binding one to a model, budget and step limit), its
ladders (``prefer``/``summarizable``/``offloadable``/``droppable``) and the model's limits; gives a
``ModelRequest`` that fits with the receipts of every choice (``RequestPreview``, rungs, summaries,
offloads, plan inputs). Imports the shared modules and ``compose``; never ``run`` or ``record``.
Light on purpose: nothing is imported here (the inspector's server process reads ``plan.rungs``
without loading pydantic).
"""
