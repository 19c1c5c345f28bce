"""Strata's API over Connect or gRPC-Web, with the gRPC stubs' interface.

:class:`ConnectStub` wraps the clients ``protoc-gen-connectrpc`` generated
(``strata/v1/*_connect.py``, on the official runtime ``connectrpc``) so
that ``stub.CreateGame(request, timeout=…, metadata=…)`` and
``stub.WatchGame(…)`` behave as a gRPC stub's do: a response, or an
iterator of responses with ``cancel()``; errors raise a
:class:`ConnectRpcError`, a ``grpc.RpcError`` carrying the same code,
message and ``grpc-status-details-bin`` as the gRPC transport would. So
:class:`clients.client.StrataClient` (and everything built on it) speaks
any of the three transports the service serves.

``connectrpc`` is imported only when a client asks for one of these
transports (``pip install 'strata[connect]'``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import status_pb2

#: Transports and how each speaks: (protocol, codec).
TRANSPORTS = ("connect", "connect-proto", "grpc-web")


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class ConnectRpcError(grpc.RpcError, grpc.Call):  # type: ignore[misc]
    """A Connect error as a ``grpc.RpcError``: ``code()``, ``details()``
    and the status details in ``trailing_metadata()``."""

    def __init__(self, error: Any) -> None:
        super().__init__(error.message)
        name = error.code.name.replace("CANCELED", "CANCELLED")
        self._code = grpc.StatusCode[name]
        self._message = str(error.message)
        status = status_pb2.Status(code=self._code.value[0], message=self._message)
        for detail in error.details:
            status.details.append(
                any_pb2.Any(
                    type_url="type.googleapis.com/" + detail.type_name,
                    value=detail.message_bytes,
                )
            )
        self._metadata = (("grpc-status-details-bin", status.SerializeToString()),)

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._message

    def trailing_metadata(self) -> Any:
        return self._metadata

    def initial_metadata(self) -> Any:
        return ()

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float | None:
        return None

    def cancel(self) -> bool:
        return False

    def add_callback(self, callback: Any) -> bool:
        return False


class _Stream:
    """A server stream's responses, as a gRPC response iterator."""

    def __init__(self, responses: Iterator[Any]) -> None:
        self._responses = responses
        self._active = True

    def __iter__(self) -> _Stream:
        return self

    def __next__(self) -> Any:
        from connectrpc.errors import ConnectError

        try:
            return next(self._responses)
        except StopIteration:
            self._active = False
            raise
        except ConnectError as error:
            self._active = False
            raise ConnectRpcError(error) from None

    def cancel(self) -> bool:
        if self._active:
            self._active = False
            close = getattr(self._responses, "close", None)
            if close is not None:
                close()
        return True

    def is_active(self) -> bool:
        return self._active


class ConnectStub:
    """A gRPC-stub-like object over one generated Connect client."""

    def __init__(self, client: Any, service: Any) -> None:
        self._client = client
        for method in service.methods:
            setattr(self, method.name, self._method(method))

    def _method(self, method: Any) -> Any:
        call = getattr(self._client, snake_case(method.name))
        streaming = method.server_streaming

        def invoke(
            request: Any, timeout: float | None = None, metadata: Any = None
        ) -> Any:
            return with_call(request, timeout, metadata)[0]

        def with_call(
            request: Any, timeout: float | None = None, metadata: Any = None
        ) -> tuple[Any, _Answered]:
            """The response and, as gRPC's ``with_call`` gives, the call
            (its response headers as ``trailing_metadata()``)."""
            from connectrpc.client import ResponseMetadata
            from connectrpc.errors import ConnectError

            headers = dict(metadata or ())
            timeout_ms = None if timeout is None else max(int(timeout * 1000), 1)
            try:
                if streaming:
                    stream = _Stream(
                        iter(call(request, headers=headers, timeout_ms=timeout_ms))
                    )
                    return stream, _Answered(())
                with ResponseMetadata() as answered:
                    response = call(request, headers=headers, timeout_ms=timeout_ms)
                return response, _Answered(tuple(answered.headers.items()))
            except ConnectError as error:
                raise ConnectRpcError(error) from None

        invoke.with_call = with_call  # type: ignore[attr-defined]
        return invoke


class _Answered:
    """What a unary call answered besides its message: its headers."""

    def __init__(self, headers: tuple[tuple[str, str], ...]) -> None:
        self._headers = headers

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._headers


def stubs(address: str, transport: str, tls: Any = None) -> tuple[Any, Any, Any, Any]:
    """(game, admin, integration) stubs speaking ``transport`` to the HTTP
    listener at ``address`` (``http://host:8080``), and the HTTP client
    they share (to close)."""
    from connectrpc.compat import (
        google_protobuf_binary_codec,
        google_protobuf_json_codec,
    )
    from connectrpc.protocol import ProtocolType
    from pyqwest import SyncClient, SyncHTTPTransport
    from strata.v1 import (
        admin_service_connect,
        admin_service_pb2,
        game_service_connect,
        game_service_pb2,
        integration_service_connect,
        integration_service_pb2,
    )

    if transport not in TRANSPORTS:
        raise ValueError(f"transport {transport!r}: use grpc or one of {TRANSPORTS}")
    protocol = (
        ProtocolType.GRPC_WEB if transport == "grpc-web" else ProtocolType.CONNECT
    )
    codec = (
        google_protobuf_json_codec()
        if transport == "connect"
        else google_protobuf_binary_codec()
    )
    if tls is not None:
        address = address.replace("http://", "https://", 1)
        http = SyncClient(
            SyncHTTPTransport(
                tls_ca_cert=tls._read(tls.ca_file),
                tls_include_system_certs=not tls.ca_file,
                tls_cert=tls._read(tls.cert_file),
                tls_key=tls._read(tls.key_file),
            )
        )
    else:
        http = SyncClient()
    options: dict[str, Any] = {
        "codec": codec,
        "protocol": protocol,
        "http_client": http,
        "send_compression": None,
    }
    game = game_service_connect.GameServiceClientSync(address, **options)
    admin = admin_service_connect.AdminServiceClientSync(address, **options)
    integration = integration_service_connect.IntegrationServiceClientSync(
        address, **options
    )
    return (
        ConnectStub(game, game_service_pb2.DESCRIPTOR.services_by_name["GameService"]),
        ConnectStub(
            admin, admin_service_pb2.DESCRIPTOR.services_by_name["AdminService"]
        ),
        ConnectStub(
            integration,
            integration_service_pb2.DESCRIPTOR.services_by_name["IntegrationService"],
        ),
        http,
    )
