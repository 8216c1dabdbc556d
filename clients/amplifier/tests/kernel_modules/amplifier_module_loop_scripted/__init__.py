"""loop-scripted (tests only): the agent loop as Amplifier's reference orchestrator
(loop-basic) runs it, reduced to what a scripted provider needs: every hook result goes
through the kernel's ``coordinator.process_hook_result`` at the same points (prompt:submit,
provider:request, tool:pre, tool:post), tool calls and results go into the context."""

__amplifier_module_type__ = "orchestrator"

import json

from amplifier_core.events import (
    PROMPT_COMPLETE,
    PROMPT_SUBMIT,
    PROVIDER_REQUEST,
    TOOL_ERROR,
    TOOL_POST,
    TOOL_PRE,
)
from amplifier_core.message_models import ChatRequest, Message, ToolSpec


def _message(m: dict) -> Message:
    return Message(**{k: v for k, v in m.items() if k in ("role", "content", "name", "tool_call_id")})


class ScriptedLoop:
    async def execute(self, prompt, context, providers, tools, hooks, coordinator=None, **kw):
        r = await hooks.emit(PROMPT_SUBMIT, {"prompt": prompt})
        await coordinator.process_hook_result(r, PROMPT_SUBMIT, "orchestrator")
        await context.add_message({"role": "user", "content": prompt})
        provider = next(iter(providers.values()))
        specs = [ToolSpec(name=t.name, description=t.description, parameters=t.input_schema) for t in tools.values()]
        for _ in range(20):
            r = await hooks.emit(PROVIDER_REQUEST, {"provider": "scripted"})
            await coordinator.process_hook_result(r, PROVIDER_REQUEST, "orchestrator")
            messages = await context.get_messages_for_request(provider=provider)
            response = await provider.complete(ChatRequest(messages=[_message(m) for m in messages], tools=specs))
            text = "".join(getattr(b, "text", "") for b in response.content)
            if not response.tool_calls:
                await context.add_message({"role": "assistant", "content": text})
                await hooks.emit(PROMPT_COMPLETE, {"prompt": prompt, "response": text})
                return text
            calls = [{"id": c.id, "tool": c.name, "arguments": c.arguments} for c in response.tool_calls]
            await context.add_message({"role": "assistant", "content": text, "tool_calls": calls})
            for c in response.tool_calls:
                pre = await hooks.emit(TOOL_PRE, {"tool_name": c.name, "tool_input": c.arguments})
                await coordinator.process_hook_result(pre, TOOL_PRE, c.name)
                tool = tools.get(c.name)
                if tool is None:
                    out = f"Error: Tool '{c.name}' not found"
                    await hooks.emit(TOOL_ERROR, {"tool_name": c.name, "tool_input": c.arguments,
                                                  "error": {"type": "RuntimeError", "msg": out}})
                else:
                    result = await tool.execute(c.arguments)
                    data = result.model_dump() if hasattr(result, "model_dump") else dict(result)
                    post = await hooks.emit(TOOL_POST, {"tool_name": c.name, "tool_input": c.arguments, "result": data})
                    await coordinator.process_hook_result(post, TOOL_POST, c.name)
                    out = json.dumps(data.get("output") if data.get("success") else data.get("error"), default=str)
                await context.add_message({"role": "tool", "tool_call_id": c.id, "content": out})
        return "out of steps"


async def mount(coordinator, config=None):
    await coordinator.mount("orchestrator", ScriptedLoop())
