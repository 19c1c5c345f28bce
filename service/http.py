"""The HTTP listener: the API for browsers and HTTP/1.1 clients, and the web
table, in the gRPC server's process and on its event loop.

One ASGI application (served by uvicorn) routes:

- ``POST /strata.v1.<Service>/<Method>``: the Connect protocol (JSON and
  binary) and gRPC-Web, through the same door as gRPC
  (:mod:`service.connect_transport`);
- ``GET /`` and ``GET /game/<id>``: the web table (static files shipped in
  the package, ``service/web/``: no build step, no CDN; gzip-compressed,
  with ETags, :mod:`service.web_files`);
- ``GET /healthz``: ``{"status": "SERVING"}`` (or 503 with
  ``NOT_SERVING``), for load balancers that speak plain HTTP, the same
  truth as ``grpc.health.v1`` (:mod:`service.health`);
- ``GET /metrics``: the OpenTelemetry metrics in Prometheus' text format
  (:mod:`service.telemetry`);
- with ``STRATA_CORS_ORIGINS`` set, cross-origin requests from those
  origins (preflights answered, ``Authorization`` allowed, the Connect and
  gRPC-Web response headers exposed); unset, the same origin only.

Why uvicorn: it runs inside an event loop that is already running (the one
the ``grpc.aio`` server runs on) as a plain coroutine, so the HTTP and gRPC
listeners share one loop, one application and one door; browsers' fetch
streams and gRPC-Web need only HTTP/1.1, which uvicorn serves well.
"""

from __future__ import annotations

import asyncio
import hmac
import re
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from service import metering, telemetry
from service.http_edge import Edge, EdgeSettings, protocol_class
from service.web_files import WebFiles

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

#: The directory of the web table's files.
WEB = Path(str(resources.files("service") / "web"))

#: Request headers a browser may send cross-origin: the Connect and
#: gRPC-Web protocols' own, the bearer token, tracing and request ids, and
#: the read-your-writes position (``strata-read-after``).
ALLOWED_HEADERS = (
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-accept-encoding",
    "connect-content-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "x-request-id",
    "traceparent",
    "tracestate",
    "strata-read-after",
)
#: Response headers a browser's script may read cross-origin.
EXPOSED_HEADERS = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "x-request-id",
    "content-encoding",
    "connect-content-encoding",
    "strata-position",
)


#: The path of a call: ``/<package>.<Service>/<Method>``.
_RPC_PATH = re.compile(r"/[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+/[A-Za-z_]\w*")


class Router:
    """Connect and gRPC-Web by path prefix; everything else to ``site``.
    A POST to a path of a call whose service is not here goes to the first
    service's application too, which answers it as an unknown method (404,
    with an access line and the RPC metric, not the site's page)."""

    def __init__(self, rpc: Mapping[str, ASGIApp], site: ASGIApp) -> None:
        self.rpc = dict(rpc)
        self.site = site

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            for prefix, app in self.rpc.items():
                if path.startswith(prefix):
                    await app(scope, receive, send)
                    return
            if self.rpc and scope["method"] == "POST" and _RPC_PATH.fullmatch(path):
                await next(iter(self.rpc.values()))(scope, receive, send)
                return
        await self.site(scope, receive, send)


#: Headers of every page and file the web table is served with: its own
#: scripts and styles only, no framing by another site (clickjacking), no
#: guessing of types, no address of the page (a join link) sent on.
PAGE_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; "
        b"img-src 'self' data:; connect-src 'self'; object-src 'none'; "
        b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


#: Methods named as they are in ``http.request.method`` (others: _OTHER).
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
#: Routes named as they are in ``http.route`` (the others by their template).
_ROUTES = frozenset({"/", "/healthz", "/livez", "/readyz", "/metrics"})


def route_of(path: str) -> str:
    """The route template a path matched, of few values: a metric's label
    never holds a game id or whatever path a caller made up."""
    if path in _ROUTES:
        return path
    if path.startswith("/game/"):
        return "/game/{game_id}"
    if path.startswith("/static/"):
        return "/static/{path}"
    if path.startswith("/strata.v1."):
        return "/{rpc.service}/{rpc.method}"
    return "_OTHER"


class HttpMetrics:
    """``http.server.request.duration`` (seconds) and
    ``http.server.active_requests`` for every request of ``app``
    (OpenTelemetry HTTP server conventions).

    Made cheaply, for every Connect and gRPC-Web call: each request's
    attribute sets are few (a method, a scheme, a route template, a
    status), so each duration series is kept by them
    (:mod:`service.metering`), and the requests in flight are counted in
    integers read when the metrics are collected."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.duration = telemetry.histogram(
            "http.server.request.duration",
            unit="s",
            description="Duration of HTTP requests served, by method, route "
            "and status (OpenTelemetry HTTP conventions)",
        )
        self._series: dict[tuple[str, str, str, int], metering.Series] = {}
        #: Requests in flight, by (method, scheme).
        self._active = telemetry.counts(
            "http.server.active_requests",
            ("http.request.method", "url.scheme"),
            "HTTP requests being served now",
            unit="{request}",
            up_down=True,
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "")
        method = method if method in _METHODS else "_OTHER"
        scheme = scope.get("scheme", "http")
        status = [0]

        async def watched(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        active = (method, scheme)
        self._active[active] += 1
        started = time.perf_counter()
        try:
            await self.app(scope, receive, watched)
        finally:
            self._active[active] -= 1
            key = (method, scheme, route_of(scope.get("path", "")), status[0] or 500)
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = self.duration.series(
                    {
                        "http.request.method": method,
                        "url.scheme": scheme,
                        "http.route": key[2],
                        "http.response.status_code": key[3],
                    }
                )
            series.record(time.perf_counter() - started)


class PageHeaders:
    """Adds :data:`PAGE_HEADERS` to every response of ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", ())}
                extra = [(n, v) for n, v in PAGE_HEADERS if n not in names]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


class Metrics:
    """``GET /metrics``: the OpenTelemetry metrics in Prometheus' text format,
    rendered in a worker thread at most once every ``max_age`` seconds (any
    number of scrapers cost one rendering at a time, and a scrape meanwhile
    gets the last one), behind ``authorization: Bearer <token>`` when a
    token is set."""

    def __init__(self, token: str = "", max_age: float = 1.0) -> None:
        self.token = token
        self.max_age = max_age
        self._lock = asyncio.Lock()
        self._rendered: tuple[float, bytes] | None = None

    async def respond(self, request: Request) -> Response:
        if self.token and not hmac.compare_digest(
            request.headers.get("authorization", "").encode(),
            f"Bearer {self.token}".encode(),
        ):
            return Response(
                "The metrics need `authorization: Bearer <STRATA_METRICS_TOKEN>`.\n",
                status_code=401,
                headers={"www-authenticate": 'Bearer realm="metrics"'},
                media_type="text/plain; charset=utf-8",
            )
        return Response(
            await self.text(), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    async def text(self) -> bytes:
        async with self._lock:
            now = time.monotonic()
            if self._rendered is not None and now - self._rendered[0] < self.max_age:
                return self._rendered[1]
            text = await asyncio.to_thread(telemetry.prometheus_text)
            self._rendered = (time.monotonic(), text)
            return text


def health_routes(serving: Callable[[], bool]) -> list[Route]:
    """The probes: ``/readyz`` and ``/healthz`` (SERVING, 200, while the
    database answers and the service is not stopping; NOT_SERVING, 503,
    otherwise: take it out of the load balancer, do not restart it), and
    ``/livez`` (200 as long as the process answers at all: restart it only
    when this fails; an outage of the database is no reason)."""

    async def ready(request: Request) -> Response:
        ok = serving()
        return JSONResponse(
            {"status": "SERVING" if ok else "NOT_SERVING"},
            status_code=200 if ok else 503,
        )

    async def alive(request: Request) -> Response:
        return JSONResponse({"status": "ALIVE"})

    return [Route("/healthz", ready), Route("/readyz", ready), Route("/livez", alive)]


def application(
    rpc: Mapping[str, ASGIApp],
    serving: Callable[[], bool],
    cors_origins: Sequence[str] = (),
    extra_routes: Sequence[Route] = (),
    metrics: Metrics | None = None,
) -> ASGIApp:
    """The HTTP listener's whole application (``metrics``: served at
    ``/metrics`` here; None when it is served elsewhere, or not at all)."""

    # The web table's files, compressed, with ETags (service.web_files).
    files = WebFiles(WEB)
    metrics_routes = [] if metrics is None else [Route("/metrics", metrics.respond)]
    site = Starlette(
        routes=[
            Route("/", files.page(), methods=["GET", "HEAD"]),
            Route("/game/{game_id}", files.page(), methods=["GET", "HEAD"]),
            *health_routes(serving),
            *metrics_routes,
            *extra_routes,
            Mount("/static", files, name="static"),
        ]
    )
    app: ASGIApp = Router(rpc, PageHeaders(site))
    if cors_origins:
        app = CORSMiddleware(
            app,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=list(ALLOWED_HEADERS),
            expose_headers=list(EXPOSED_HEADERS),
            max_age=600,
        )
    return HttpMetrics(app)


def metrics_application(metrics: Metrics, serving: Callable[[], bool]) -> ASGIApp:
    """The application of the metrics listener (``STRATA_METRICS_ADDRESS``):
    ``/metrics`` and the probes, nothing else."""
    return HttpMetrics(
        Starlette(routes=[Route("/metrics", metrics.respond), *health_routes(serving)])
    )


def bind(host: str, port: int, reuse_port: bool = False) -> socket.socket:
    """A listening socket on ``host:port`` (0: a free port); OSError when the
    port is taken. ``reuse_port``: shared with the other processes that
    bind it so (``SO_REUSEPORT``: the kernel spreads connections over them)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    # Accepted connections inherit it: without it a response written in two
    # parts (headers, body) waits for the client's delayed ACK, ~40 ms a call.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        raise OSError(error.errno, error.strerror, f"{host}:{port} (HTTP)") from None
    sock.listen(1024)
    sock.setblocking(False)
    return sock


class HttpListener:
    """uvicorn serving ``app`` on a bound socket, on the running loop."""

    def __init__(
        self,
        app: ASGIApp,
        sock: socket.socket,
        tls: ssl.SSLContext | None = None,
        edge: Edge | None = None,
    ) -> None:
        self.sock = sock
        self.port: int = sock.getsockname()[1]
        #: The bounds of its connections (:mod:`service.http_edge`).
        self.edge = edge or Edge(EdgeSettings())
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            ws="none",
            http=protocol_class(self.edge),
            # Who the client is behind a proxy is the door's to say
            # (STRATA_TRUSTED_PROXIES), not uvicorn's (it would believe any
            # X-Forwarded-For that comes from 127.0.0.1).
            proxy_headers=False,
            timeout_graceful_shutdown=5,
        )
        config.load()
        # The service's own TLS context (service.tls), mutual when asked.
        config.ssl = tls
        self.server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self.server.serve(sockets=[self.sock]))
        while not self.server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
            await asyncio.sleep(0.005)

    async def stop(self) -> None:
        self.server.should_exit = True
        if self._task is not None:
            await self._task
        self.sock.close()
