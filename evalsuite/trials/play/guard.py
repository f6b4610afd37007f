"""Only this page may drive this page: the Host header names the server's own address, and every POST comes
from a form of the same origin.

The play page listens on 127.0.0.1 only, but a browser on the same machine will still send it requests that
other sites ask for: a page elsewhere can post a form to http://127.0.0.1:8470/person (signing the person in as
someone else, or opening tasks), and a name that resolves to 127.0.0.1 (DNS rebinding) lets such a page read the
answers too. So a request whose Host is not the address the server is bound to (its own `host:port`, or
`localhost:port` for 127.0.0.1) is refused with 400, and a POST whose Origin (or, without one, Referer) is not
that address is refused with 403. Browsers send Origin with every form POST; a client that sends neither is
refused too.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send


class SameOrigin:
    """ASGI middleware: a Host that is not the server's address answers 400, a cross-origin POST 403."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = refused(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def own_hosts(scope: Scope) -> set[str]:
    """The Host values that name the socket this request came in on."""
    host, port = scope.get("server") or ("", None)
    names = {host, "localhost"} if host == "127.0.0.1" else {host}
    out = {f"{name}:{port}" for name in names}
    return out | names if port in (None, 80) else out  # the default port may be left out of Host


class SameHost:
    """ASGI middleware for a loopback API (the local model endpoint): a Host that is not the server's own address
    answers 400 (DNS rebinding); API clients send no Origin, so there is no form check."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = host_refused(scope, "server") if scope["type"] == "http" else None
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def host_refused(scope: Scope, noun: str = "page") -> PlainTextResponse | None:
    """400 for a request whose Host is not this server's address, else None."""
    host = Headers(scope=scope).get("host", "")
    if host in own_hosts(scope):
        return None
    own = "{}:{}".format(*(scope.get("server") or ("", "")))
    return PlainTextResponse(f"Host {host!r} is not this {noun}'s address; open http://{own}/ instead.\n",
                             status_code=400)


def refused(scope: Scope) -> PlainTextResponse | None:
    """The answer to a request from elsewhere, or None for one of this page's own."""
    headers = Headers(scope=scope)
    hosts = own_hosts(scope)
    host = headers.get("host", "")
    if (refusal := host_refused(scope)) is not None:
        return refusal
    if scope["method"] not in ("GET", "HEAD"):
        origin = headers.get("origin") or _origin_of(headers.get("referer", ""))
        if origin not in {f"http://{h}" for h in hosts}:
            return PlainTextResponse(f"A form from {origin or 'no page'} may not act on this page; use the page at "
                                     f"http://{host}/ itself.\n", status_code=403)
    return None


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
