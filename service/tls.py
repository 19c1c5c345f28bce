"""TLS on every listener: the certificate and key the service presents, and
the certificate authority whose clients it accepts (mutual TLS).

``STRATA_TLS_CERT`` and ``STRATA_TLS_KEY`` (PEM files) turn TLS on for the
gRPC port and the HTTP listener alike; ``STRATA_TLS_CLIENT_CA`` also asks
every client for a certificate signed by that authority (and no other: the
system's authorities are not trusted for clients).

The files are read again when they change on disk (:class:`Certificates`):
a renewed certificate is served to the next connection, with no restart; a
renewal caught half-written (a key that does not match its certificate)
keeps the previous files until the next change. Refused handshakes on the
HTTP listener are counted and logged at most once every 10 s
(``http.tls_handshakes_refused``); gRPC's core does its handshakes out of
Python's sight, so refusals on the gRPC port are not logged.
"""

from __future__ import annotations

import dataclasses
import os
import ssl
import threading
from pathlib import Path
from typing import TypeVar

import grpc
import structlog

from service.http_edge import Throttled

log = structlog.get_logger("strata.tls")

_C = TypeVar("_C", bound=ssl.SSLContext)


@dataclasses.dataclass(frozen=True)
class TlsFiles:
    """The PEM files of the service's TLS."""

    cert: str
    key: str
    client_ca: str = ""

    def problems(self) -> list[str]:
        """What is wrong with these files (empty: nothing)."""
        out = []
        for name, path in (
            ("STRATA_TLS_CERT", self.cert),
            ("STRATA_TLS_KEY", self.key),
            ("STRATA_TLS_CLIENT_CA", self.client_ca),
        ):
            if path and not Path(path).is_file():
                out.append(f"{name}={path!r} is not a readable file")
        if bool(self.cert) != bool(self.key):
            out.append("STRATA_TLS_CERT and STRATA_TLS_KEY go together")
        if self.client_ca and not self.cert:
            out.append("STRATA_TLS_CLIENT_CA needs STRATA_TLS_CERT and STRATA_TLS_KEY")
        if out or not self.cert:
            return out
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(self.cert, self.key)
        except (ssl.SSLError, OSError) as error:
            out.append(
                "STRATA_TLS_CERT and STRATA_TLS_KEY do not load as a PEM "
                f"certificate and its key: {_reason(error)}"
            )
        if self.client_ca:
            try:
                context.load_verify_locations(self.client_ca)
            except (ssl.SSLError, OSError) as error:
                out.append(
                    f"STRATA_TLS_CLIENT_CA={self.client_ca!r} does not load as a "
                    f"PEM certificate authority: {_reason(error)}"
                )
        return out

    def grpc_credentials(self) -> grpc.ServerCredentials:
        ca = Path(self.client_ca).read_bytes() if self.client_ca else None
        return grpc.ssl_server_credentials(
            [(Path(self.key).read_bytes(), Path(self.cert).read_bytes())],
            root_certificates=ca,
            require_client_auth=ca is not None,
        )

    def ssl_context(self) -> ssl.SSLContext:
        """An HTTP listener's context of the files as they are now."""
        return _context(self, ssl.SSLContext)

    def paths(self) -> tuple[str, ...]:
        return tuple(path for path in (self.cert, self.key, self.client_ca) if path)

    @property
    def mode(self) -> str:
        """``mutual``, or ``on`` (the start line's word for it)."""
        return "mutual" if self.client_ca else "on"


def _context(files: TlsFiles, kind: type[_C]) -> _C:
    """A server context of class ``kind`` loaded from ``files``; with a
    client authority, only clients it signed are accepted."""
    context = kind(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files.cert, files.key)
    if files.client_ca:
        context.load_verify_locations(files.client_ca)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _stamp(path: str) -> tuple[int, int, int] | None:
    """What tells a file changed: its modification time, size and inode
    (a renewal moved into place is a new inode)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size, status.st_ino)


class Certificates:
    """The service's TLS files as served now, read again when one changes.
    Each new connection looks (a ``stat`` of each file): the HTTP listener
    through :meth:`ssl_context` (a context whose every connection is made
    by the current files' context), gRPC through the fetcher of its dynamic
    credentials (:meth:`grpc_credentials`), which gRPC calls before each
    handshake."""

    def __init__(self, files: TlsFiles) -> None:
        self.files = files
        self.refused = Throttled("http.tls_handshakes_refused")
        #: How many times the files were taken in again.
        self.reloads = 0
        self._lock = threading.Lock()
        self._stamps = self._read_stamps()
        self._served, self._pem = self._load()
        self._grpc_stamps = self._stamps
        self._tried = self._stamps

    def _read_stamps(self) -> tuple[tuple[int, int, int] | None, ...]:
        return tuple(_stamp(path) for path in self.files.paths())

    def _load(self) -> tuple[_Served, tuple[bytes, bytes, bytes | None]]:
        files = self.files
        served = _context(files, _Served)
        served.refused = self.refused
        served.sslobject_class = _Watched
        ca = Path(files.client_ca).read_bytes() if files.client_ca else None
        return served, (Path(files.key).read_bytes(), Path(files.cert).read_bytes(), ca)

    def refresh(self) -> bool:
        """Take the files in again if one changed since (True when it did);
        files that do not load (caught half-written) leave the previous
        ones served, and are tried again once they change again."""
        stamps = self._read_stamps()
        if stamps == self._stamps or stamps == self._tried:
            return False
        with self._lock:
            if stamps == self._stamps or stamps == self._tried:
                return False
            self._tried = stamps
            try:
                self._served, self._pem = self._load()
            except (ssl.SSLError, OSError) as error:
                log.warning("tls.reload_failed", error=str(error))
                return False
            self._stamps = stamps
            self.reloads += 1
        log.info("tls.reloaded", files=list(self.files.paths()))
        return True

    def current(self) -> ssl.SSLContext:
        """The context of the files as they are now."""
        self.refresh()
        return self._served

    def ssl_context(self) -> ssl.SSLContext:
        """The HTTP listener's context: each connection is made by
        :meth:`current`'s context."""
        context = _Current(ssl.PROTOCOL_TLS_SERVER)
        context.certificates = self
        return context

    def grpc_credentials(self) -> grpc.ServerCredentials:
        """The gRPC port's credentials, fetched again before a handshake
        once the files changed."""
        return grpc.dynamic_ssl_server_credentials(
            self._grpc_configuration(),
            self._fetch,
            require_client_authentication=bool(self.files.client_ca),
        )

    def _grpc_configuration(self) -> grpc.ServerCertificateConfiguration:
        key, cert, ca = self._pem
        return grpc.ssl_server_certificate_configuration([(key, cert)], ca)

    def _fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC's question before a handshake: new files (or None: the same)."""
        try:
            self.refresh()
            with self._lock:
                if self._grpc_stamps == self._stamps:
                    return None
                self._grpc_stamps = self._stamps
                return self._grpc_configuration()
        except Exception:  # never fail a handshake for a look at the files
            log.exception("tls.fetch_failed")
            return None


class _Served(ssl.SSLContext):
    """A context of the files as they were loaded; its connections count
    the handshakes they refuse."""

    refused: Throttled


class _Watched(ssl.SSLObject):
    """A connection's TLS that counts a refused handshake (a plain-text
    client, no or an unknown client certificate, no shared protocol)."""

    def do_handshake(self) -> None:
        try:
            super().do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise  # more bytes to come: not a refusal
        except ssl.SSLError as error:
            context = self.context
            if isinstance(context, _Served):
                context.refused.note(error.reason or type(error).__name__)
            raise


class _Current(ssl.SSLContext):
    """The HTTP listener's context: every connection is made by the
    context of the files as they are now (asyncio makes each through
    ``wrap_bio``)."""

    certificates: Certificates

    def wrap_bio(
        self,
        incoming: ssl.MemoryBIO,
        outgoing: ssl.MemoryBIO,
        server_side: bool = False,
        server_hostname: str | bytes | None = None,
        session: ssl.SSLSession | None = None,
    ) -> ssl.SSLObject:
        return self.certificates.current().wrap_bio(
            incoming, outgoing, server_side, server_hostname, session
        )


def _reason(error: ssl.SSLError | OSError) -> str:
    """OpenSSL's reason (``[SSL] PEM lib (_ssl.c:3900)`` says little)."""
    reason = getattr(error, "reason", None) or error.strerror or str(error)
    text = " ".join(str(reason).split()).lower().replace("_", " ")
    return "not PEM (or not what it should be)" if "pem lib" in text else text
