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
        """The HTTP listener's context."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        if self.client_ca:
            context.load_verify_locations(self.client_ca)
            context.verify_mode = ssl.CERT_REQUIRED
        return context


def _reason(error: ssl.SSLError | OSError) -> str:
    """OpenSSL's reason (``[SSL] PEM lib (_ssl.c:3900)`` says little)."""
    reason = getattr(error, "reason", None) or error.strerror or str(error)
    text = " ".join(str(reason).split()).lower().replace("_", " ")
    return "not PEM (or not what it should be)" if "pem lib" in text else text
