"""TLS on every listener: the certificate and key the service presents, and
the certificate authority whose clients it accepts (mutual TLS).

``STRATA_TLS_CERT`` and ``STRATA_TLS_KEY`` (PEM files) turn TLS on for the
gRPC port and the HTTP listener alike; ``STRATA_TLS_CLIENT_CA`` also asks
every client for a certificate signed by that authority.
"""

from __future__ import annotations

import dataclasses
import ssl
from pathlib import Path

import grpc


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
        if not out and self.cert:
            try:
                self.ssl_context()
            except (ssl.SSLError, OSError) as error:
                out.append(f"the TLS certificate and key do not load: {error}")
        return out

    def grpc_credentials(self) -> grpc.ServerCredentials:
        ca = Path(self.client_ca).read_bytes() if self.client_ca else None
        return grpc.ssl_server_credentials(
            [(Path(self.key).read_bytes(), Path(self.cert).read_bytes())],
            root_certificates=ca,
            require_client_auth=ca is not None,
        )

    def ssl_context(self) -> ssl.SSLContext:
        """The HTTP listener's context."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        if self.client_ca:
            context.load_verify_locations(self.client_ca)
            context.verify_mode = ssl.CERT_REQUIRED
        return context
