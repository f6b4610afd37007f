"""The NL_ASSERTION judge: a model on any OpenAI-compatible endpoint decides, from a trial's transcript, whether
each of a task's natural-language assertions holds.

Like the user simulator, the judge is part of the test: its model, prompt, temperature and seed are pinned in the
task record (EvaluationCriteria.judge, so in the suite version), and the prompt below is refused for a suite that
pinned another one (its sha256 differs). Where the endpoint is is not part of the test: EVALSUITE_JUDGE_BASE_URL
(and EVALSUITE_JUDGE_API_KEY, when it needs one) say it, and without them nothing is judged (`endpoint()` is None),
so the basis is reported as not graded.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from evalsuite.core.hashing import json_sha256
from evalsuite.core.records import MESSAGE, JudgeSettings, TraceEvent

BASE_URL_VAR, API_KEY_VAR = "EVALSUITE_JUDGE_BASE_URL", "EVALSUITE_JUDGE_API_KEY"
VERSION = "evalsuite nl-assertion judge 1"
SYSTEM = """You grade a recorded customer-service conversation against a list of expectations.

You are given the transcript (the customer, the agent, and every tool call the agent made with what the tool
returned) and numbered expectations about how the agent should behave or what it should say. Decide each
expectation on its own, from the transcript alone: it is met only if the transcript shows it met; an expectation
about something the agent must not do is met when the agent never did it.

Answer with one JSON object and nothing else:
{"results": [{"expectation": <its number>, "reasoning": "<one or two sentences>", "met": <true or false>}]}
with exactly one entry per expectation, in the order given."""
USER = "Transcript:\n{transcript}\n\nExpectations:\n{expectations}"
PROMPT_SHA256 = json_sha256({"system": SYSTEM, "user": USER})
DEFAULT = JudgeSettings(model="gpt-4.1-2025-04-14", version=VERSION, prompt_sha256=PROMPT_SHA256, temperature=0.0,
                        seed=0)


class JudgeError(RuntimeError):
    """The judge cannot give a verdict: a suite pinned another prompt, or the model's reply is not one."""


class Judged(BaseModel):
    """One assertion as the judge decided it."""

    assertion: str
    met: bool
    reasoning: str = ""


class Judgement(BaseModel):
    """The judge's verdict on a trial's assertions, with the model the endpoint said answered."""

    settings: JudgeSettings
    response_model: str | None
    results: list[Judged]


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    api_key: str


def endpoint() -> Endpoint | None:
    """The configured judge endpoint, or None (nothing is judged)."""
    url = os.environ.get(BASE_URL_VAR, "").strip()
    return Endpoint(url, os.environ.get(API_KEY_VAR) or "not-needed") if url else None


def transcript(trace: Sequence[TraceEvent], final_message: str) -> str:
    """The trial as the judge reads it: each message with its speaker, each tool call with its result or error,
    and the agent's final message when the conversation did not already end with it."""
    lines = []
    for e in trace:
        if e.kind == MESSAGE:
            lines.append(f"{'customer' if e.actor == 'user' else 'agent'}: {e.arguments.get('text', '')}")
        else:
            result = e.result if e.outcome == "ok" else f"error: {e.error}"
            lines.append(f"{e.actor} tool call {e.tool}({json.dumps(e.arguments, sort_keys=True)}) -> "
                         f"{json.dumps(result, default=str) if not isinstance(result, str) else result}")
    if final_message and (not lines or lines[-1] != f"agent: {final_message}"):
        lines.append(f"agent: {final_message}")
    return "\n".join(lines)


def request(settings: JudgeSettings, text: str, assertions: Sequence[str]) -> dict[str, Any]:
    """The chat request on the pinned model, prompt, temperature and seed; a suite pinning another prompt is
    refused."""
    if settings.prompt_sha256 != PROMPT_SHA256:
        raise JudgeError(f"judge.prompt_sha256: the suite pins {settings.prompt_sha256[:12]}, this evalsuite's "
                         f"judge prompt is {PROMPT_SHA256[:12]} ({VERSION})")
    expectations = "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, 1))
    extra = {"seed": settings.seed} if settings.seed is not None else {}
    return {"model": settings.model, "temperature": settings.temperature, **extra,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": USER.format(transcript=text, expectations=expectations)}]}


def judge(where: Endpoint, settings: JudgeSettings, text: str, assertions: Sequence[str]) -> Judgement:
    """Ask the judge, synchronously."""
    from openai import OpenAI  # here: the SDK is slow to import and most trials judge nothing

    with OpenAI(base_url=where.base_url, api_key=where.api_key) as client:
        completion = client.chat.completions.create(**request(settings, text, assertions))
    return _judgement(settings, assertions, completion)


async def ajudge(where: Endpoint, settings: JudgeSettings, text: str, assertions: Sequence[str]) -> Judgement:
    """Ask the judge from an event loop (a trial on the trial engine), without blocking the other trials."""
    from openai import AsyncOpenAI

    async with AsyncOpenAI(base_url=where.base_url, api_key=where.api_key) as client:
        completion = await client.chat.completions.create(**request(settings, text, assertions))
    return _judgement(settings, assertions, completion)


class _Reply(BaseModel):
    class Item(BaseModel):
        expectation: int
        met: bool
        reasoning: str = ""

    results: list[Item]


def _judgement(settings: JudgeSettings, assertions: Sequence[str], completion: Any) -> Judgement:
    """The reply read strictly: one JSON object with one result per assertion, numbered in order (a fenced code
    block around it is accepted)."""
    content = completion.choices[0].message.content or ""
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", content)
    try:
        reply = _Reply.model_validate_json(body)
    except ValidationError as exc:
        raise JudgeError(f"the judge's reply is not the JSON asked for: {exc.errors()[0]['msg']}: "
                         f"{content[:200]!r}") from exc
    numbers = [r.expectation for r in reply.results]
    if numbers != list(range(1, len(assertions) + 1)):
        raise JudgeError(f"the judge answered expectations {numbers}, asked for 1..{len(assertions)}")
    return Judgement(settings=settings, response_model=getattr(completion, "model", None),
                     results=[Judged(assertion=a, met=r.met, reasoning=r.reasoning)
                              for a, r in zip(assertions, reply.results)])
