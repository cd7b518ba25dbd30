"""The inspector inside a coding agent: an MCP server over the documents the CLI prints as JSON.

``answers.py`` shapes an answer (compact or full, safe JSON text), ``tools.py`` computes each tool's
document with the functions behind ``--json`` (no MCP SDK needed), ``server.py`` registers them on the
SDK's server (stdio for ``crux-devtools mcp``, streamable HTTP at ``/mcp`` for ``serve``). Nothing here
imports the SDK at import time: ``crux-devtools[mcp]`` is an optional extra.
"""
