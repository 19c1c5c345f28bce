"""TLS as an operator runs it: certificates renewed on disk are served to
the next connection without a restart, a refused handshake on the HTTP
listener is a log line (one per interval, however many), and the start line
says which listener speaks TLS."""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import trustme

from clients.client import StrataClient, StrataError, Tls
from eventstore.factory import open_store
from service.server import Running, create_server
from service.tls import TlsFiles
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS
from tests.service.served import Served, free_port


def write_cert(authority: trustme.CA, folder: Path, tag: str) -> tuple[Path, Path]:
    """A certificate of ``authority`` for 127.0.0.1 and its key, written
    beside the served files as ``tag``."""
    issued = authority.issue_cert("127.0.0.1", "localhost")
    cert, key = folder / f"cert-{tag}.pem", folder / f"key-{tag}.pem"
    issued.private_key_and_cert_chain_pem.write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    return cert, key


def install(cert: Path, key: Path, files: TlsFiles) -> None:
    """Renew as cert-manager or a deploy script does: each file moved into
    place whole (a new inode)."""
    for source, target in ((cert, files.cert), (key, files.key)):
        staged = Path(target + ".new")
        staged.write_bytes(source.read_bytes())
        os.replace(staged, target)


def authority_file(authority: trustme.CA, folder: Path, tag: str) -> str:
    path = folder / f"ca-{tag}.pem"
    authority.cert_pem.write_to_path(str(path))
    return str(path)


def served_certificate(port: int, ca: str) -> bytes:
    """The certificate the HTTP listener on ``port`` presents to a new
    connection (DER), verified against ``ca``."""
    context = ssl.create_default_context(cafile=ca)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
        assert der is not None
        return der


def grpc_answers(port: int, ca: str) -> bool:
    """Whether a new gRPC connection trusting only ``ca`` gets an answer."""
    try:
        with StrataClient(f"127.0.0.1:{port}", tls=Tls(ca), timeout=3) as client:
            return bool(client.list_game_types().game_types)
    except StrataError as error:
        assert error.code is grpc.StatusCode.UNAVAILABLE
        return False


@pytest.fixture
def tls_server(tmp_path: Path, sqlite_url: str) -> Iterator[tuple[Running, TlsFiles]]:
    first = trustme.CA()
    cert, key = write_cert(first, tmp_path, "first")
    files = TlsFiles(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
    install(cert, key, files)
    authority_file(first, tmp_path, "first")
    store = open_store(sqlite_url)
    running = create_server(
        store,
        admin_token=ADMIN_TOKEN,
        port=0,
        limits=NO_RATE_LIMITS,
        http_port=0,
        tls=files,
    )
    try:
        yield running, files
    finally:
        running.stop(grace=0.5)
        store.close()


def test_a_renewed_certificate_is_served_to_the_next_connection(
    tls_server: tuple[Running, TlsFiles], tmp_path: Path
) -> None:
    running, files = tls_server
    first_ca = str(tmp_path / "ca-first.pem")
    before = served_certificate(running.http_port, first_ca)
    assert grpc_answers(running.port, first_ca)
    renewed = trustme.CA()
    renewed_ca = authority_file(renewed, tmp_path, "renewed")
    install(*write_cert(renewed, tmp_path, "renewed"), files)
    # No restart: the next connection on either listener is the new one's.
    after = served_certificate(running.http_port, renewed_ca)
    assert after != before
    assert Path(files.cert).read_text().startswith("-----BEGIN")
    with pytest.raises(ssl.SSLCertVerificationError):
        served_certificate(running.http_port, first_ca)
    assert grpc_answers(running.port, renewed_ca)
    assert not grpc_answers(running.port, first_ca)
    assert running.certificates is not None and running.certificates.reloads == 1


def test_a_renewal_caught_half_written_keeps_the_previous_certificate(
    tls_server: tuple[Running, TlsFiles], tmp_path: Path
) -> None:
    running, files = tls_server
    first_ca = str(tmp_path / "ca-first.pem")
    before = served_certificate(running.http_port, first_ca)
    renewed = trustme.CA()
    cert, key = write_cert(renewed, tmp_path, "renewed")
    staged = Path(files.cert + ".new")
    staged.write_bytes(cert.read_bytes())
    os.replace(staged, files.cert)  # the certificate moved in, its key not yet
    assert served_certificate(running.http_port, first_ca) == before
    assert grpc_answers(running.port, first_ca)
    install(cert, key, files)  # and now the key too
    renewed_ca = authority_file(renewed, tmp_path, "renewed")
    assert served_certificate(running.http_port, renewed_ca) != before
    assert grpc_answers(running.port, renewed_ca)


@pytest.fixture
def tls_files_on_disk(tmp_path: Path) -> dict[str, str]:
    authority = trustme.CA()
    cert, key = write_cert(authority, tmp_path, "served")
    return {
        "STRATA_TLS_CERT": str(cert),
        "STRATA_TLS_KEY": str(key),
        # One authority signs the service's certificate and its clients'.
        "STRATA_TLS_CLIENT_CA": authority_file(authority, tmp_path, "clients"),
    }


def plain_text(port: int) -> None:
    """An HTTP request in plain text to a TLS port."""
    with socket.create_connection(("127.0.0.1", port), 5) as plain:
        plain.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        with contextlib.suppress(OSError):
            assert plain.recv(1024) == b""  # closed, unanswered


def no_certificate(port: int, ca: str) -> None:
    """A TLS client with no certificate of its own, to a mutual TLS port."""
    context = ssl.create_default_context(cafile=ca)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        contextlib.suppress(OSError),
    ):
        tls.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        assert tls.recv(1024) == b""


@pytest.mark.parametrize(
    ("client", "reason"),
    [("plain", "HTTP_REQUEST"), ("anonymous", "PEER_DID_NOT_RETURN_A_CERTIFICATE")],
)
def test_refused_handshakes_are_one_log_line_a_while(
    tmp_path: Path, tls_files_on_disk: dict[str, str], client: str, reason: str
) -> None:
    metrics = f"127.0.0.1:{free_port()}"
    server = Served(tmp_path, {**tls_files_on_disk, "STRATA_METRICS_ADDRESS": metrics})
    try:
        start = server.wait_serving()
        # The start line says which listener speaks TLS.
        assert start["grpc_tls"] == "mutual"
        assert start["http_tls"] == "mutual"
        assert start["metrics_tls"] == "off"
        for _ in range(5):
            if client == "plain":
                plain_text(server.http_port)
            else:
                no_certificate(
                    server.http_port, tls_files_on_disk["STRATA_TLS_CLIENT_CA"]
                )

        def refused() -> list[dict[str, Any]]:
            return [
                line
                for line in server.lines()
                if line["event"] == "http.tls_handshakes_refused"
            ]

        deadline = time.monotonic() + 10
        while not refused() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # the other four, had they each had a line
        lines = refused()
        assert len(lines) == 1, lines
        assert lines[0]["level"] == "warning"
        assert lines[0]["counts"] == {reason: 1}
        assert lines[0]["interval_s"] == 10
    finally:
        server.stop()


def client_files(authority: trustme.CA, folder: Path, tag: str) -> Tls:
    issued = authority.issue_cert(f"client-{tag}")
    cert, key = folder / f"client-{tag}.pem", folder / f"client-{tag}.key"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    return Tls("", str(cert), str(key))


def test_a_replaced_client_authority_decides_the_next_connection(
    tmp_path: Path, sqlite_url: str
) -> None:
    served_by = trustme.CA()
    cert, key = write_cert(served_by, tmp_path, "served")
    ca = authority_file(served_by, tmp_path, "served")
    old, new = trustme.CA(), trustme.CA()
    client_ca = tmp_path / "clients.pem"
    old.cert_pem.write_to_path(str(client_ca))
    files = TlsFiles(str(cert), str(key), str(client_ca))
    old_client = client_files(old, tmp_path, "old")
    new_client = client_files(new, tmp_path, "new")
    store = open_store(sqlite_url)
    running = create_server(
        store, admin_token=ADMIN_TOKEN, port=0, limits=NO_RATE_LIMITS, tls=files
    )

    def answers(client: Tls) -> bool:
        tls = Tls(ca, client.cert_file, client.key_file)
        try:
            with StrataClient(f"127.0.0.1:{running.port}", tls=tls, timeout=3) as c:
                return bool(c.list_game_types().game_types)
        except StrataError:
            return False

    try:
        assert answers(old_client) and not answers(new_client)
        staged = tmp_path / "clients.pem.new"
        new.cert_pem.write_to_path(str(staged))
        os.replace(staged, client_ca)
        assert answers(new_client) and not answers(old_client)
    finally:
        running.stop(grace=0.5)
        store.close()
