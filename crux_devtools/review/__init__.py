"""Change review: what an edit (or a replay) does to the requests a project sends.

``changes`` compares two snapshots of one request (pure, no I/O); ``revisions`` exports a git
revision; ``compare`` turns two project reports into the review document; ``render`` prints it.
Nothing here starts a worker: it sits below the inspector, whose ``diff_evaluate`` and ``diff_live``
evaluate revisions and whose worker replays recorded steps with this engine. Nothing here is imported
by ``import crux_devtools``.
"""
