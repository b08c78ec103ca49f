"""The address policy behind the web tools: what counts as internal, in every spelling."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.tools.builtin.netguard import AddressPolicy, AddressRefused, resolve_checked

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.9.9.9", "loopback"),
    ("::1", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.5.4", "private"),
    ("192.168.1.1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("fd00:ec2::254", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("100.64.0.1", "not a public address"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("::ffff:10.0.0.1", "private"),
    ("::127.0.0.1", "loopback"),
    ("64:ff9b::a9fe:a9fe", "cloud metadata"),
    ("64:ff9b::7f00:1", "loopback"),
    ("2002:7f00:1::", "loopback"),
    ("2002:a9fe:a9fe::", "cloud metadata"),
    ("fe80::1%eth0", "link-local"),
    ("not-an-address", "not an IP address"),
]


@pytest.mark.parametrize(("address", "why"), REFUSED)
def test_internal_addresses_are_refused_in_every_spelling(address: str, why: str) -> None:
    assert why in AddressPolicy().refusal(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert AddressPolicy().refusal(address) == ""


def test_allowing_private_addresses_never_allows_the_metadata_services() -> None:
    policy = AddressPolicy(allow_private=True)
    assert policy.refusal("10.0.0.1") == "" and policy.refusal("127.0.0.1") == ""
    for address in ("169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254"):
        assert "cloud metadata" in policy.refusal(address)


def test_named_networks_allow_only_themselves() -> None:
    policy = AddressPolicy(networks=("127.0.0.2/32", "10.20.0.0/16"))
    assert policy.refusal("127.0.0.2") == "" and policy.refusal("10.20.3.4") == ""
    assert "loopback" in policy.refusal("127.0.0.1")
    assert "private" in policy.refusal("10.21.0.1")
    with pytest.raises(ValueError):
        AddressPolicy(networks=("not a network",))


@given(st.integers(min_value=0, max_value=2**24 - 1))
def test_every_loopback_address_is_refused_also_when_mapped_into_ipv6(low: int) -> None:
    v4 = ipaddress.IPv4Address((127 << 24) | low)
    mapped = ipaddress.IPv6Address((0xFFFF << 32) | int(v4))
    assert "loopback" in AddressPolicy().refusal(str(v4))
    assert "loopback" in AddressPolicy().refusal(str(mapped))


async def test_a_resolver_failure_is_a_refusal() -> None:
    async def resolve(host: str, port: int) -> list[str]:
        raise OSError("no such name")

    with pytest.raises(AddressRefused, match=r"cannot resolve nowhere\.test: no such name"):
        await resolve_checked("nowhere.test", 80, AddressPolicy(), resolve)


async def test_a_name_without_addresses_is_refused() -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return []

    with pytest.raises(AddressRefused, match="has no address"):
        await resolve_checked("empty.test", 80, AddressPolicy(), resolve)
