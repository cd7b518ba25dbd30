"""Record: what ran, kept and read back.

Takes the steps a run hands over (``recording``); gives the runs database (``runstore``, standard
library only), redaction, OpenTelemetry export, prices, and ``replay``, which plans a recorded step
again. Imports the shared modules, ``compose`` and ``plan``; never ``run`` (the run pushes into the
recorder, the recorder knows nothing of the tool loop). Light on purpose: nothing is imported here,
because the inspector's server process reads ``record.runstore``, ``record.pricing``,
``record.replay_overrides`` and ``record.otel_semconv`` without loading pydantic or the planner.
"""
