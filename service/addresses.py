"""Who a caller is on the network: one address per client, on every listener.

The gRPC listener names a peer ``ipv4:127.0.0.1:53211``, the HTTP listener
``::ffff:127.0.0.1`` (a dual-stack socket sees an IPv4 client as an
IPv4-mapped IPv6 address): without one canonical form every per-address
limit counted one client twice. :func:`canonical` gives that form
(IPv4-mapped addresses as plain IPv4, IPv6 compressed and lower case),
and :class:`TrustedProxies` the client's real address behind a reverse
proxy the operator trusts (``STRATA_TRUSTED_PROXIES``): the address the
proxy put in ``X-Forwarded-For``, read from the right, past the trusted
hops. A caller that is not a trusted proxy cannot choose its address: its
``X-Forwarded-For`` is ignored.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable, Mapping

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The header a reverse proxy names the client in.
FORWARDED_FOR = "x-forwarded-for"
#: Hops read from ``X-Forwarded-For`` at most (a longer chain is cut).
MAX_FORWARDED_HOPS = 16


@functools.lru_cache(maxsize=4096)
def canonical(host: str) -> str:
    """The one form of an address: ``::ffff:127.0.0.1`` -> ``127.0.0.1``,
    ``[::1]`` -> ``::1``, ``2001:DB8::0:1`` -> ``2001:db8::1``. What is not
    an IP address (a Unix socket's path, a test's name) is kept as given.
    Remembered (every call asks it of its peer's address)."""
    text = host.strip().strip("[]")
    text = text.partition("%")[0]  # an IPv6 zone names the interface, not the peer
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return host.strip()
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return str(address.ipv4_mapped)
    return str(address)


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """``10.0.0.0/8``, ``127.0.0.1``, ``fd00::/8`` -> networks; ValueError
    naming the entry that is neither."""
    networks: list[Network] = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text.strip("[]"), strict=False))
        except ValueError:
            raise ValueError(
                f"{text!r} is not an address or a network (e.g. 10.0.0.0/8)"
            ) from None
    return tuple(networks)


class TrustedProxies:
    """The reverse proxies whose ``X-Forwarded-For`` names the client."""

    def __init__(self, networks: Iterable[Network] = ()) -> None:
        self.networks = tuple(networks)

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, address: str) -> bool:
        """Whether ``address`` (canonical) is one of the trusted proxies."""
        if not self.networks:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.networks)

    def client(self, peer: str, headers: Mapping[str, str]) -> str:
        """The client's address: ``peer`` (canonical), or, when ``peer`` is
        a trusted proxy, the rightmost address of ``X-Forwarded-For`` that
        is not a trusted proxy (the leftmost when all are). A malformed
        entry ends the walk at the last address trusted so far."""
        if not self.trusts(peer):
            return peer
        chain = headers.get(FORWARDED_FOR, "")
        if not chain:
            return peer
        hops = [hop.strip() for hop in chain.split(",")][-MAX_FORWARDED_HOPS:]
        client = peer
        for hop in reversed(hops):
            address = canonical(hop)
            try:
                ipaddress.ip_address(address)
            except ValueError:
                break  # not an address: whoever wrote it is not to be believed
            client = address
            if not self.trusts(address):
                break
        return client
