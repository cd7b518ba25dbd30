"""Run: planned requests sent to a model.

Takes a planned request; gives the model's answers, the tool loop's steps and results
(``generate``/``agenerate``), through the provider adapters in ``models/``; ``record_call`` wraps a
call made with a provider's own SDK. Each step is handed to ``record`` as it happens, so this is the
one stage that may import every other. Light on purpose: nothing is imported here.
"""
