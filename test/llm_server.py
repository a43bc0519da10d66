"""A real HTTP server on 127.0.0.1 that plays the language model with scripted replies.

Used by test_llm.py and test_hybrid.py (a helper module, like procs.py and fakes.py).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def openai_reply(content: str) -> dict[str, Any]:
    return {
        'id': 'x',
        'object': 'chat.completion',
        'choices': [
            {
                'index': 0,
                'message': {'role': 'assistant', 'content': content},
                'finish_reason': 'stop',
            }
        ],
    }


def ollama_reply(content: str) -> dict[str, Any]:
    return {'model': 'm', 'message': {'role': 'assistant', 'content': content}, 'done': True}


class ModelServer:
    """Scripted model: each request pops a step {content|body, status, delay}; keeps requests."""

    def __init__(self, provider: str = 'openai') -> None:
        self.provider = provider
        self.requests: list[dict[str, Any]] = []
        self.script: list[dict[str, Any]] = []
        self.default: dict[str, Any] = {'content': '{"tools": []}'}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                raw = self.rfile.read(int(self.headers.get('Content-Length', 0)))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                server.requests.append(
                    {
                        'path': self.path,
                        'headers': dict(self.headers),
                        'body': body,
                        'raw': raw.decode('utf-8', 'replace'),
                    }
                )
                step = server.script.pop(0) if server.script else server.default
                time.sleep(step.get('delay', 0.0))
                if 'raw' in step:  # bytes as they are (any encoding, any size)
                    data = step['raw']
                elif 'body' in step:
                    payload = (
                        step['body'] if isinstance(step['body'], str) else json.dumps(step['body'])
                    )
                    data = payload.encode('utf-8')
                else:
                    wrap = ollama_reply if server.provider == 'ollama' else openai_reply
                    data = json.dumps(wrap(step['content'])).encode('utf-8')
                try:
                    self.send_response(step.get('status', 200))
                    self.send_header('Content-Type', 'application/json')
                    if step.get('encoding'):
                        self.send_header('Content-Encoding', step['encoding'])
                    if not step.get('no_length'):
                        self.send_header('Content-Length', str(len(data)))
                    self.end_headers()
                    drip = step.get('drip', 0.0)  # seconds between single bytes
                    if drip:
                        for i in range(len(data)):
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                            time.sleep(drip)
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if step.get('no_length'):
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f'http://127.0.0.1:{self.httpd.server_address[1]}'
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def reply(self, *steps: Any) -> 'ModelServer':
        """Queue replies: a str is the content; a dict is a full step."""
        self.script.extend({'content': s} if isinstance(s, str) else s for s in steps)
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]
