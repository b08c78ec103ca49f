"""Which network addresses the web tools may connect to: `AddressPolicy`.

A web request made for a model must not reach what only this machine can reach (server
side request forgery): the loopback interface, private and link-local networks, a cloud
provider's metadata service. The policy judges *addresses*, after the name was resolved,
so a public name that resolves to a private address is refused like the address itself
(and the caller then connects to exactly the address that was judged, so a second DNS
answer cannot swap in another one).

By default only globally routable unicast addresses pass (`ipaddress`'s ``is_global``,
which leaves out private, loopback, link-local, shared (100.64.0.0/10), reserved,
documentation and multicast ranges). An IPv6 address that carries an IPv4 one
(IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible, 6to4, Teredo, NAT64 ``64:ff9b::/96``) is
judged as that IPv4 address too. ``allow_private`` lets every address through except the
metadata services (`METADATA_ADDRESSES`), for intranets; ``networks`` lets only the
networks named through (a test server on ``127.0.0.2``, one intranet range).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = [
    "METADATA_ADDRESSES",
    "AddressPolicy",
    "AddressRefused",
    "Resolver",
    "resolve_checked",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
"""Cloud metadata services (AWS, ECS, Alibaba, AWS over IPv6): refused under every policy."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``resolve(host, port)``: the addresses a name has (as text). May raise `OSError`."""


class AddressRefused(Exception):
    """A name or address the policy does not let a request reach; the message says why."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of ``host`` from the system resolver (``getaddrinfo``)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class AddressPolicy:
    """The addresses requests may reach. See the module docs."""

    allow_private: bool = False
    networks: tuple[str, ...] = ()
    _parsed: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        parsed = tuple(ipaddress.ip_network(n, strict=False) for n in self.networks)
        object.__setattr__(self, "_parsed", parsed)

    def refusal(self, address: str) -> str:
        """Why ``address`` may not be reached; "" when it may. Never raises: text that is
        not an address is refused."""
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return f"{address!r} is not an IP address"
        for candidate in _forms(ip):
            if candidate in METADATA_ADDRESSES:
                return f"{address} is a cloud metadata address"
        if any(ip in net for net in self._parsed if net.version == ip.version):
            return ""
        if self.allow_private:
            return ""
        for candidate in reversed(_forms(ip)):  # an embedded IPv4 address names it best
            why = _category(candidate)
            if why:
                return f"{address} is {why}"
        return ""


def _forms(ip: IPAddress) -> list[IPAddress]:
    """``ip`` and every IPv4 address embedded in it."""
    out: list[IPAddress] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            out.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            out.append(ip.sixtofour)
        if ip.teredo is not None:
            out.extend(ip.teredo)
        if ip in _NAT64:
            out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        packed = ip.packed
        if packed[:12] == bytes(12) and int(ip) > 1:  # IPv4-compatible ::a.b.c.d
            out.append(ipaddress.IPv4Address(packed[12:]))
    return out


def _category(ip: IPAddress) -> str:
    """What kind of non-public address ``ip`` is; "" for a public unicast address."""
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "not a public address"
    return ""


async def resolve_checked(
    host: str, port: int, policy: AddressPolicy, resolve: Resolver = system_resolver
) -> str:
    """The address to connect to for ``host``: ``host`` itself when it is an address,
    else the first address it resolves to. Every address the name has must pass
    ``policy`` (a name with one private address among public ones is refused: which
    one a client would use is not for the name's owner to choose). Raises
    `AddressRefused` with the reason; resolver failures are refusals too."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(bare.split("%", 1)[0])
        addresses = [bare]
    except ValueError:
        try:
            addresses = await resolve(bare, port)
        except (OSError, UnicodeError) as exc:
            raise AddressRefused(f"cannot resolve {bare}: {exc}") from None
    if not addresses:
        raise AddressRefused(f"{bare} has no address")
    for address in addresses:
        why = policy.refusal(address)
        if why:
            shown = (
                why
                if address == bare
                else f"{bare} resolves to " + why.replace(" is ", ", which is ", 1)
            )
            raise AddressRefused(f"{shown}; requests to it are refused")
    return addresses[0]
