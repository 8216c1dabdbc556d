"""context-list (tests only): the session's messages in a list; what the kernel's
process_hook_result persists lands here too."""

__amplifier_module_type__ = "context"


class ListContext:
    def __init__(self):
        self.messages: list[dict] = []

    async def add_message(self, message: dict) -> None:
        self.messages.append(dict(message))

    async def get_messages(self) -> list[dict]:
        return list(self.messages)

    async def get_messages_for_request(self, token_budget=None, provider=None) -> list[dict]:
        return list(self.messages)

    async def set_messages(self, messages: list[dict]) -> None:
        self.messages = list(messages)

    async def clear(self) -> None:
        self.messages = []


async def mount(coordinator, config=None):
    await coordinator.mount("context", ListContext())
