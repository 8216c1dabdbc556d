"""provider-scripted (tests only): a model that plays a script. Each turn of the script
is a list of steps: ``("tool", name, arguments)`` asks for a tool, ``("say", text)``
answers. Every request it is given (the whole list of messages the model would see) is
kept in ``requests``."""

__amplifier_module_type__ = "provider"

from amplifier_core.message_models import ChatResponse, TextBlock, ToolCall


class ScriptedProvider:
    name = "scripted"

    def __init__(self):
        self.script: list[tuple] = []
        self.requests: list[list[dict]] = []
        self._n = 0

    def get_info(self):
        return {"id": "scripted", "display_name": "scripted"}

    async def list_models(self):
        return []

    def parse_tool_calls(self, response):
        return response.tool_calls or []

    async def complete(self, request, **kwargs):
        self.requests.append([m.model_dump() if hasattr(m, "model_dump") else dict(m) for m in request.messages])
        step = self.script.pop(0) if self.script else ("say", "done")
        if step[0] == "tool":
            self._n += 1
            call = ToolCall(id=f"call-{self._n}", name=step[1], arguments=step[2])
            return ChatResponse(content=[TextBlock(text="")], tool_calls=[call])
        return ChatResponse(content=[TextBlock(text=step[1])])


async def mount(coordinator, config=None):
    await coordinator.mount("providers", ScriptedProvider(), name="scripted")
