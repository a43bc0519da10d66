"""One HTTP client per policy for an OpenAI-compatible or Ollama chat endpoint.

* ``openai``: ``POST {url}/v1/chat/completions`` (vLLM, llama.cpp server, hosted
  gpt-oss); the reply text is ``choices[0].message.content``.
* ``ollama``: ``POST {url}/api/chat`` with ``stream: false, format: json``; the
  reply text is ``message.content``.

Every call has explicit connect/read/write/pool timeouts and a hard wall-clock
bound (the call runs on a worker thread and is abandoned at its budget, so a
server that drips bytes cannot hold routing past its deadline). The body is read
in chunks against the same deadline and at most ``max_reply_bytes`` of it
(:data:`MAX_REPLY_BYTES`), so the worker itself stops too, and whatever the
endpoint sends (size, nesting, encoding) ends as a ``bad_response``. The reply
is parsed on the worker, inside the budget (``chat(..., parse=...)``). A circuit
breaker stops calling after ``breaker_failures`` consecutive failures for
``breaker_cooldown_s``; then one trial call is let through (half-open).

The API key is read from the environment, sent as ``Authorization: Bearer``
and never put in a log line, an error message or a decision.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import json

import httpx

from tool_router.common.errors import LLMError
from tool_router.routing.llm.settings import LLMParams

log = logging.getLogger(__name__)

# Failure kinds carried by LLMCallError.kind (and by Decision.llm.error).
TIMEOUT, CONNECT, HTTP, BAD_RESPONSE, CIRCUIT_OPEN = (
    'timeout',
    'connect',
    'http',
    'bad_response',
    'circuit open',
)


# Most bytes of a response body read (a reply of 42 tool names is well under 4 KiB; the
# chat envelope and a verbose model stay far below this). Larger bodies are refused unread.
MAX_REPLY_BYTES = 256 * 1024


class LLMCallError(LLMError):
    """A call that produced no reply text; ``kind`` is one of the constants above."""

    def __init__(self, kind: str, what: str, *, where: str = '', hint: str = '') -> None:
        self.kind = kind
        super().__init__(what, where=where, hint=hint)


class CircuitBreaker:
    """Closed -> open after N consecutive failures -> half-open after the cool-down -> closed."""

    def __init__(
        self, failures: int, cooldown_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.failures, self.cooldown_s, self._clock = failures, cooldown_s, clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._opened_at: float | None = None
        self._trial = False

    @property
    def state(self) -> str:
        """'closed', 'open' or 'half-open'."""
        with self._lock:
            return self._state()

    def _state(self) -> str:
        if self._opened_at is None:
            return 'closed'
        if self._clock() - self._opened_at >= self.cooldown_s:
            return 'half-open'
        return 'open'

    def allow(self) -> tuple[bool, str]:
        """Whether a call may be made now, and if not, why ("circuit open ...")."""
        with self._lock:
            state = self._state()
            if state == 'closed':
                return True, ''
            if state == 'half-open' and not self._trial:
                self._trial = True
                return True, ''
            left = max(0.0, self.cooldown_s - (self._clock() - (self._opened_at or 0.0)))
            return False, (
                f'circuit open after {self._consecutive} consecutive failures '
                f'({left:.1f} s of cool-down left)'
            )

    def record_success(self) -> None:
        """A call succeeded: close the circuit."""
        with self._lock:
            self._consecutive, self._opened_at, self._trial = 0, None, False

    def record_failure(self) -> None:
        """A call failed: count it, and open the circuit at the threshold."""
        with self._lock:
            self._consecutive += 1
            self._trial = False
            if self._consecutive >= self.failures or self._opened_at is not None:
                self._opened_at = self._clock()


@dataclass(frozen=True)
class Reply:
    """The model's reply text and how long the exchange took."""

    text: str
    duration_ms: float
    status: int
    parsed: Any = None  # what ``chat(parse=...)`` returned for ``text`` (None without parse)


def endpoint(params: LLMParams) -> str:
    """The full URL a chat request is posted to."""
    base = params.url.rstrip('/')
    if params.provider == 'ollama':
        return base + ('' if base.endswith('/api/chat') else '/api/chat')
    if base.endswith('/chat/completions'):
        return base
    if base.endswith('/v1'):
        base = base[:-3]
    return base + '/v1/chat/completions'


def request_body(params: LLMParams, system: str, user: str) -> dict[str, Any]:
    """The JSON body of one chat request for the configured provider."""
    messages = [{'role': 'system', 'content': system}, {'role': 'user', 'content': user}]
    if params.provider == 'ollama':
        return {
            'model': params.model,
            'messages': messages,
            'stream': False,
            'format': 'json',
            'options': {'temperature': params.temperature, 'num_predict': params.max_tokens},
        }
    body: dict[str, Any] = {
        'model': params.model,
        'messages': messages,
        'temperature': params.temperature,
        'max_tokens': params.max_tokens,
    }
    if params.json_mode:
        body['response_format'] = {'type': 'json_object'}
    return body


def reply_text(provider: str, data: Any) -> str:
    """The assistant's text in a decoded response body; raise ``LLMCallError`` when absent."""
    try:
        if provider == 'ollama':
            content = data['message']['content']
        else:
            content = data['choices'][0]['message']['content']
    except (KeyError, IndexError, TypeError):
        raise LLMCallError(BAD_RESPONSE, f'response has no {provider} chat message') from None
    return content if isinstance(content, str) else ''


class LLMClient:
    """Posts chat requests; one ``httpx.Client`` (connection reuse) for the client's lifetime."""

    def __init__(
        self,
        params: LLMParams,
        *,
        transport: httpx.BaseTransport | None = None,
        api_key: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        self.params = params
        self.max_reply_bytes = max_reply_bytes
        self.url = endpoint(params)
        self.host = params.host()
        self._api_key = api_key if api_key is not None else os.environ.get(params.api_key_env, '')
        headers = {'Content-Type': 'application/json', 'Accept-Encoding': 'identity'}
        if self._api_key:
            headers['Authorization'] = f'Bearer {self._api_key}'
        self._http = httpx.Client(
            transport=transport,
            headers=headers,
            follow_redirects=False,
            timeout=self._timeout(params.timeout_s),
            limits=httpx.Limits(max_connections=4, max_keepalive_connections=2),
        )
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=4, thread_name_prefix='llm-call'
        )
        self.breaker = CircuitBreaker(params.breaker_failures, params.breaker_cooldown_s, clock)

    def _timeout(self, budget_s: float) -> httpx.Timeout:
        return httpx.Timeout(budget_s, connect=min(self.params.connect_timeout_s, budget_s))

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, '***') if self._api_key else text

    def chat(
        self,
        system: str,
        user: str,
        budget_s: float | None = None,
        parse: Callable[[str], Any] | None = None,
        deadline: float | None = None,
    ) -> Reply:
        """One chat exchange within ``budget_s`` (default ``timeout_s``); raise LLMCallError.

        ``deadline`` (``time.monotonic()``) is an absolute end, for a caller whose
        time started earlier; the exchange ends at the earliest of the three.
        ``parse`` runs on the worker thread, so the budget covers reading *and*
        parsing the reply: a reply that takes too long to parse is a timeout too.
        Whatever the worker is still doing at the deadline, the caller returns
        then, and a reply the worker gets later is dropped with it.
        """
        now = time.monotonic()
        end = now + min(
            self.params.timeout_s, budget_s if budget_s is not None else self.params.timeout_s
        )
        if deadline is not None:
            end = min(end, deadline)
        budget = max(0.0, end - now)
        allowed, why = self.breaker.allow()
        if not allowed:
            raise LLMCallError(CIRCUIT_OPEN, why, where=self.host)
        body = request_body(self.params, system, user)
        start = time.perf_counter()
        deadline = end
        future = self._pool.submit(self._exchange, body, budget, deadline, parse)
        try:
            status, text, parsed = future.result(timeout=max(0.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            future.cancel()  # not started yet (all workers busy): never run it
            self.breaker.record_failure()
            raise LLMCallError(
                TIMEOUT, f'no reply within {budget:.2f} s', where=self.host
            ) from None
        except LLMCallError:
            self.breaker.record_failure()
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the reply does, the call degrades
            self.breaker.record_failure()
            raise LLMCallError(
                BAD_RESPONSE, f'reply could not be handled: {type(exc).__name__}', where=self.host
            ) from None
        self.breaker.record_success()
        return Reply(text, (time.perf_counter() - start) * 1000.0, status, parsed)

    def _exchange(
        self,
        body: dict[str, Any],
        budget: float,
        deadline: float,
        parse: Callable[[str], Any] | None,
    ) -> tuple[int, str, Any]:
        status, text = self._post(body, budget, deadline)
        if time.monotonic() > deadline:
            raise LLMCallError(TIMEOUT, f'reply read after {budget:.2f} s', where=self.host)
        return status, text, parse(text) if parse is not None else None

    def _read(self, response: httpx.Response, deadline: float) -> bytes:
        """The body, read chunk by chunk against the deadline and the size bound."""
        declared = response.headers.get('Content-Length', '')
        if declared.isdigit() and int(declared) > self.max_reply_bytes:
            raise LLMCallError(
                BAD_RESPONSE,
                f'reply of {int(declared)} bytes is over the {self.max_reply_bytes}-byte bound',
                where=self.host,
            )
        chunks, size = [], 0
        for chunk in response.iter_raw():
            size += len(chunk)
            if size > self.max_reply_bytes:
                raise LLMCallError(
                    BAD_RESPONSE,
                    f'reply is over the {self.max_reply_bytes}-byte bound',
                    where=self.host,
                )
            if time.monotonic() > deadline:
                raise LLMCallError(
                    TIMEOUT, 'reply still arriving after its budget', where=self.host
                )
            chunks.append(chunk)
        return b''.join(chunks)

    def _post(self, body: dict[str, Any], budget: float, deadline: float) -> tuple[int, str]:
        try:
            # httpx timeouts are per operation (connect, each read): sized from what is left,
            # so an abandoned worker stops soon after the deadline too (_read checks it).
            left = max(0.001, deadline - time.monotonic())
            with self._http.stream(
                'POST', self.url, json=body, timeout=self._timeout(left)
            ) as response:
                status = response.status_code
                if status != 200:
                    raise LLMCallError(
                        HTTP,
                        f'HTTP {status} from the model server',
                        where=self.host,
                        hint=(
                            'check llm.model and the API key' if status in (401, 403, 404) else ''
                        ),
                    )
                if response.headers.get('Content-Encoding', 'identity') not in ('identity', ''):
                    raise LLMCallError(
                        BAD_RESPONSE,
                        'compressed reply refused (the request asks for identity encoding)',
                        where=self.host,
                    )
                raw = self._read(response, deadline)
        except httpx.TimeoutException as exc:
            raise LLMCallError(
                TIMEOUT, f'{type(exc).__name__} after {budget:.2f} s', where=self.host
            ) from None
        except httpx.ConnectError as exc:
            raise LLMCallError(
                CONNECT,
                self._scrub(f'cannot connect: {exc}'),
                where=self.host,
                hint='is the model server running and llm.url right?',
            ) from None
        except httpx.HTTPError as exc:
            raise LLMCallError(
                CONNECT, self._scrub(f'{type(exc).__name__}: {exc}'), where=self.host
            ) from None
        try:
            data = json.loads(raw)  # UTF-8/16/32 by RFC 8259 detection; anything else fails
        except (ValueError, RecursionError):
            raise LLMCallError(
                BAD_RESPONSE, 'response body is not JSON', where=self.host
            ) from None
        return status, reply_text(self.params.provider, data)

    def close(self) -> None:
        """Close the connection pool and the worker threads (pending calls are abandoned)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._http.close()
