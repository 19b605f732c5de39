"""The typed results of :class:`mcpio.Client`, for annotations and ``isinstance`` checks.

Each is the wire JSON object itself (a ``dict`` subclass: ``tool["inputSchema"]`` keeps
working) with typed, snake_case attributes (``tool.input_schema``); ``.model_dump()`` returns
the raw dict. See docs/guides/typed-results.md.
"""

from ._client._results import (
    AudioContent,
    CallToolResult,
    Completion,
    ContentBlock,
    EmbeddedResourceContent,
    GetPromptResult,
    ImageContent,
    Implementation,
    Prompt,
    PromptArgument,
    PromptMessage,
    Resource,
    ResourceContents,
    ResourceLinkContent,
    ResourceTemplate,
    ServerCapabilities,
    SkillEntry,
    SkillFile,
    TextContent,
    Tool,
    WireObject,
)
from ._skills import SkillVerificationError

__all__ = [
    "AudioContent",
    "CallToolResult",
    "Completion",
    "ContentBlock",
    "EmbeddedResourceContent",
    "GetPromptResult",
    "ImageContent",
    "Implementation",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "Resource",
    "ResourceContents",
    "ResourceLinkContent",
    "ResourceTemplate",
    "ServerCapabilities",
    "SkillEntry",
    "SkillFile",
    "SkillVerificationError",
    "TextContent",
    "Tool",
    "WireObject",
]
