"""Compose: what the user writes, resolved to text.

Takes the user's declarations (``prompt``, ``context``/``when``/``match``, ``skill``, their input
models and callbacks) and an input; gives the resolved parts in use order (``Inspection``,
``Resolved``). Imports only the shared modules of the core (``errors``, ``tools``, ``tokens``,
``contract``), never a later stage at import time. Light on purpose: nothing is imported here, so
``crux_devtools.core.compose.<module>`` loads only that module.
"""
