#!/usr/bin/env python3
"""A third-party ACP client (the `agent-client-protocol` Python SDK) driving
`jucode acp` end to end.

Usage: acp_client.py JUCODE_BIN WORKSPACE PROMPT

Spawns `JUCODE_BIN acp` (passing on every JUCODE_* environment variable),
initializes, creates a session in WORKSPACE, sends PROMPT, allows every
permission request once, and prints what it saw as JSON lines on stdout:

  {"event": "frame", "direction": "incoming"|"outgoing", "message": {...}}
  {"event": "initialize", "result": {...}}
  {"event": "new_session", "result": {...}}
  {"event": "update", "sessionId": "...", "update": {...}}
  {"event": "permission", "sessionId": "...", "toolCall": {...}, "options": [...]}
  {"event": "prompt", "result": {...}}
  {"event": "exit", "returncode": N}

Exits 3 (after printing {"event": "missing_sdk"}) when the SDK is not installed.
"""

import asyncio
import json
import os
import sys

try:
    import acp
    from acp.schema import (
        AllowedOutcome,
        ClientCapabilities,
        FileSystemCapabilities,
        RequestPermissionResponse,
        TextContentBlock,
    )
except ImportError as err:  # pragma: no cover - reported to the Rust test
    print(json.dumps({"event": "missing_sdk", "error": str(err)}), flush=True)
    sys.exit(3)


def emit(record):
    print(json.dumps(record), flush=True)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class RecordingClient:
    """Records session updates; allows each permission request once."""

    async def session_update(self, session_id, update, **kwargs):
        emit({"event": "update", "sessionId": session_id, "update": dump(update)})

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        emit(
            {
                "event": "permission",
                "sessionId": session_id,
                "toolCall": dump(tool_call),
                "options": [dump(o) for o in options],
            }
        )
        allow = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )


def observe(event):
    emit(
        {
            "event": "frame",
            "direction": getattr(event.direction, "value", str(event.direction)),
            "message": event.message,
        }
    )


async def main(binary, workspace, prompt):
    env = {k: v for k, v in os.environ.items() if k.startswith("JUCODE_")}
    async with acp.spawn_agent_process(
        RecordingClient(),
        binary,
        "acp",
        env=env,
        # Big frames are fine; stderr goes to ours (a full pipe would block).
        transport_kwargs={"limit": 50 * 1024 * 1024, "stderr": None},
        observers=[observe],
    ) as (conn, proc):
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=False, write_text_file=False),
            terminal=False,
        )
        init = await conn.initialize(protocol_version=1, client_capabilities=capabilities)
        emit({"event": "initialize", "result": dump(init)})
        session = await conn.new_session(cwd=workspace, mcp_servers=[])
        emit({"event": "new_session", "result": dump(session)})
        result = await conn.prompt(
            session_id=session.session_id,
            prompt=[TextContentBlock(type="text", text=prompt)],
        )
        emit({"event": "prompt", "result": dump(result)})
    emit({"event": "exit", "returncode": proc.returncode})


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    asyncio.run(asyncio.wait_for(main(*sys.argv[1:]), timeout=60))
