"""Every OpenTelemetry attribute name this package reads or writes, in one table.

The GenAI semantic conventions are still in "Development": names are renamed between releases (the
newer ones are opt-in in the instrumentations through
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``). Everything that receives spans
(``serve``'s ``/v1/traces``) or emits them (``record_runs(..., otel=True)``) takes its names from
here, so following a rename is a change to this file only. ``LEGACY`` lists older spellings still
sent by instrumentations on the earlier conventions; they are read, never written.

Imports nothing: the web server process reads it too.
"""

from __future__ import annotations

SEMCONV_VERSION = "1.37.0"
"""The GenAI semantic conventions these names follow (``gen_ai.input.messages`` & co. came with it)."""
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

# -- gen_ai.* ----------------------------------------------------------------------------------------
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_WRITE_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
ERROR_TYPE = "error.type"  # general semantic conventions, used by GenAI spans for failures
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"  # content: only with content capture on
TOOL_CALL_RESULT = "gen_ai.tool.call.result"  # content: only with content capture on
CODE_FILE_PATH = "code.file.path"  # general semantic conventions: where the target is defined
CODE_LINE_NUMBER = "code.line.number"

# Older spellings (read only): the provider before ``gen_ai.provider.name``, the usage counts
# before ``input_tokens``/``output_tokens``.
LEGACY = {
    PROVIDER_NAME: ("gen_ai.system",),
    USAGE_INPUT_TOKENS: ("gen_ai.usage.prompt_tokens",),
    USAGE_OUTPUT_TOKENS: ("gen_ai.usage.completion_tokens",),
}

# Operations whose span is one call to a model (an inference span): each becomes a step.
INFERENCE_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})
RUN_OPERATION = "invoke_agent"  # the span of a whole agent run: its model-call spans are the run's steps
TOOL_OPERATION = "execute_tool"  # one tool call: it goes under the step that asked for it
# Any of these on a span makes it a GenAI span.
GENAI_MARKERS = (OPERATION_NAME, REQUEST_MODEL, PROVIDER_NAME, "gen_ai.system")

# -- crux.*: the planner's decisions, on the spans we emit ------------------------------------------
CRUX_TARGET = "crux.target"
CRUX_RUN_ID = "crux.run.id"
CRUX_RUN_STATUS = "crux.run.status"
CRUX_ORIGIN = "crux.origin"
CRUX_INPUT_BUDGET = "crux.input_budget.max_input_tokens"
CRUX_OPTIMIZE_AT = "crux.input_budget.optimize_at"
CRUX_INPUT_TOKENS = "crux.request.input_tokens"
CRUX_TIER = "crux.request.tier"
CRUX_ADAPTATIONS = "crux.adaptations"  # JSON: [{contributor, from, to, reason}, ...]
CRUX_ADAPTATION_COUNT = "crux.adaptations.count"
CRUX_DROPPED = "crux.dropped_contexts"  # the ids of the contexts the token budget dropped
CRUX_RUNGS = "crux.rungs"  # JSON: {contributor: rung sent}
CRUX_WARNINGS = "crux.warnings"
# What makes the round trip exact: the whole receipt and the recorded values the conventions have no
# name for (or round to nanoseconds). Read back first; the names above are for querying in a backend.
CRUX_REQUEST = "crux.request"  # JSON: the step's whole receipt (the planner's decisions, no prompt text)
CRUX_CACHE = "crux.request.cache"  # JSON: the planned prompt-cache placement of the step
CRUX_OFFLOADS = "crux.offloads"  # JSON: the step's offload receipts
CRUX_STEP_INDEX = "crux.step.index"
CRUX_LATENCY_MS = "crux.step.latency_ms"
CRUX_USAGE = "crux.usage"  # JSON: the usage as recorded (the run's or the step's)
CRUX_ERROR = "crux.error"  # JSON: the error as recorded ({type, message, traceback, ...})
CRUX_RUN_KIND = "crux.run.kind"
CRUX_RUN_STARTED_AT = "crux.run.started_at"
CRUX_RUN_DURATION_MS = "crux.run.duration_ms"
CRUX_RUN_MODEL = "crux.run.model"
CRUX_RUN_INPUT = "crux.run.input"  # content: JSON of the run's input
CRUX_RUN_TEXT = "crux.run.text"  # content: the run's final text
CRUX_TOOL_OUTPUT = "crux.tool.output"  # content: JSON of what the tool returned to the application
CRUX_TOOL_ERROR = "crux.tool.error"  # JSON: the tool's error the model was told about

# -- environment -------------------------------------------------------------------------------------
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
