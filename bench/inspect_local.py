"""Inspect AI's side of bench_model_agents.py: samples of `turns` tool turns against the local endpoint.

inspect-ai 0.3.285 refuses its own OpenAI providers (`openai/...`, `openai-api/...`) with the openai SDK this
project pins (2.x; they want 3.4 and import 3.x-only types), so the bench registers a minimal provider,
`local-openai/MODEL`, built from Inspect's own chat-completions conversions (inspect_ai.model._openai, the same
functions its openai-api provider calls) on `openai.AsyncOpenAI`. Everything else is Inspect's: the sample
scheduler, `max_connections` and `max_samples`, the tool loop of `generate()`, transcripts and the log file.
"""
from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.model._openai import (
    chat_choices_from_openai,
    messages_to_openai,
    model_output_from_openai,
    openai_chat_tool_choice,
    openai_chat_tools,
    openai_completion_params,
)
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool
from openai import NOT_GIVEN, AsyncOpenAI

PROVIDER = "local-openai"


@modelapi(name=PROVIDER)
def _provider() -> type[ModelAPI]:
    return LocalOpenAI


class LocalOpenAI(ModelAPI):
    """Chat completions against LOCAL_OPENAI_BASE_URL, as Inspect's openai-api provider makes them."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any):
        super().__init__(model_name=model_name, base_url=base_url or os.environ["LOCAL_OPENAI_BASE_URL"],
                         api_key=api_key or "local", config=config)
        self.clients: dict[asyncio.AbstractEventLoop, AsyncOpenAI] = {}

    @property
    def client(self) -> AsyncOpenAI:
        """This event loop's client: Inspect keeps a model across eval() calls, each on a loop of its own."""
        loop = asyncio.get_running_loop()
        if loop not in self.clients:
            self.clients[loop] = AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0)
        return self.clients[loop]

    async def generate(self, input, tools, tool_choice, config: GenerateConfig) -> ModelOutput:
        request = dict(messages=await messages_to_openai(input),
                       tools=openai_chat_tools(tools) if tools else NOT_GIVEN,
                       tool_choice=openai_chat_tool_choice(tool_choice) if tools else NOT_GIVEN,
                       **openai_completion_params(model=self.model_name, config=config, tools=bool(tools)))
        completion = await self.client.chat.completions.create(**request)
        return model_output_from_openai(completion, chat_choices_from_openai(completion, tools))

    def connection_key(self) -> str:
        return str(self.base_url)


@tool
def lookup():
    async def execute(key: str) -> str:
        """Look a record up by its key.

        Args:
            key: the record's key
        """
        return f'{{"key": "{key}", "status": "ok"}}'

    return execute


def samples_task(samples: int) -> Task:
    """`samples` samples, each answered by the tool loop of `generate()` with one tool to call."""
    return Task(dataset=[Sample(input=f"Sample {i}: look the record up, then report.", id=i) for i in range(samples)],
                solver=[use_tools(lookup()), generate()])


def run_samples(task: Task, url: str, in_flight: int, model: str | None = None) -> dict[str, Any]:
    """The task's samples, `in_flight` at once (max_connections = max_samples = in_flight); what they did. `model`:
    an Inspect model name (openai-api/local/local: Inspect's own provider, which reads LOCAL_BASE_URL), else ours."""
    os.environ["LOCAL_OPENAI_BASE_URL"] = os.environ["LOCAL_BASE_URL"] = url
    os.environ.setdefault("LOCAL_API_KEY", "local")
    logs = inspect_eval(task, model=model or f"{PROVIDER}/local", max_connections=in_flight, max_samples=in_flight,
                        display="none", log_level="error", log_dir=tempfile.mkdtemp(prefix="bench-inspect-"))
    log = logs[0]
    if log.status != "success" or log.samples is None:
        raise RuntimeError(f"Inspect eval ended {log.status}: {log.error}")
    calls = sum(sum(1 for m in s.messages if m.role == "assistant") for s in log.samples)
    return {"done": len(log.samples), "model_calls": calls,
            "answered": sum(1 for s in log.samples if s.output.completion == "done")}
