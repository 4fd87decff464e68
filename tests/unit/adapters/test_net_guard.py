"""The SSRF guard refuses internal addresses unless allow-listed, whatever the host name says."""

from __future__ import annotations

import pytest

from backend.adapters.net_guard import AddressBlockedError, BlockedUrlError, UrlPolicy, check_url, parse_allow_entry


def resolver_for(mapping: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    return lambda host, port: mapping[host]


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "172.16.0.5", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
     "::1", "fe80::1", "fd00:ec2::254", "::ffff:127.0.0.1", "224.0.0.1", "100.100.100.200"],
)
def test_internal_addresses_are_refused(address: str) -> None:
    with pytest.raises(BlockedUrlError, match="OPENGURU_FETCH_ALLOWLIST"):
        check_url("https://innocent.example/", UrlPolicy(), resolver=resolver_for({"innocent.example": [address]}))


def test_one_internal_address_among_public_ones_is_enough_to_refuse() -> None:
    resolver = resolver_for({"mixed.example": ["93.184.216.34", "10.0.0.7"]})
    with pytest.raises(BlockedUrlError):
        check_url("http://mixed.example/", UrlPolicy(), resolver=resolver)


def test_public_addresses_pass() -> None:
    assert check_url("https://docs.example.com/a", UrlPolicy(),
                     resolver=resolver_for({"docs.example.com": ["93.184.216.34"]})) == "docs.example.com"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://x/", "ftp://x/", "//no-scheme", "http:///path"])
def test_other_schemes_and_hostless_urls_are_refused(url: str) -> None:
    with pytest.raises(BlockedUrlError):
        check_url(url, UrlPolicy(), resolver=resolver_for({}))


def test_credentials_in_urls_are_refused() -> None:
    with pytest.raises(BlockedUrlError, match="credentials"):
        check_url("https://user:pw@docs.example.com/", UrlPolicy(), resolver=resolver_for({}))


def test_allow_list_by_network_and_by_host_name() -> None:
    policy = UrlPolicy.from_setting(["10.0.0.0/8", "wiki.intranet"])
    assert check_url("http://build.corp/", policy, resolver=resolver_for({"build.corp": ["10.2.3.4"]}))
    assert check_url("http://wiki.intranet/", policy, resolver=resolver_for({})) == "wiki.intranet"
    with pytest.raises(BlockedUrlError):
        check_url("http://db.corp/", policy, resolver=resolver_for({"db.corp": ["192.168.0.10"]}))


def test_real_resolution_of_localhost_is_refused() -> None:
    with pytest.raises(BlockedUrlError):
        check_url("http://localhost:8000/admin/", UrlPolicy())


def test_allow_list_entries_with_a_port_allow_that_port_only() -> None:
    policy = UrlPolicy.from_setting(["127.0.0.1:8201", "wiki.corp:8443", "[::1]:8201", "10.0.0.0/8:443"])
    loopback = resolver_for({"127.0.0.1": ["127.0.0.1"], "::1": ["::1"], "wiki.corp": ["10.9.9.9"],
                             "build.corp": ["10.2.3.4"]})
    assert check_url("http://127.0.0.1:8201/docs", policy, resolver=loopback) == "127.0.0.1"
    assert check_url("http://wiki.corp:8443/", policy, resolver=resolver_for({})) == "wiki.corp"
    assert check_url("http://[::1]:8201/", policy, resolver=loopback) == "::1"
    assert check_url("https://build.corp/", policy, resolver=loopback) == "build.corp"
    for other_port in ("http://127.0.0.1:8202/", "http://127.0.0.1/", "http://[::1]:8202/", "http://wiki.corp/",
                       "http://build.corp:8080/"):
        with pytest.raises(BlockedUrlError, match="OPENGURU_FETCH_ALLOWLIST"):
            check_url(other_port, policy, resolver=loopback)


def test_allow_list_entries_without_a_port_allow_every_port() -> None:
    policy = UrlPolicy.from_setting(["127.0.0.1", "::1", "wiki.corp"])
    loopback = resolver_for({"127.0.0.1": ["127.0.0.1"], "::1": ["::1"]})
    for url in ("http://127.0.0.1:8201/", "http://127.0.0.1:9/", "http://[::1]:8202/", "http://wiki.corp:1234/"):
        assert check_url(url, policy, resolver=loopback)


@pytest.mark.parametrize("entry", ["wiki.corp:http", "127.0.0.1:0", "127.0.0.1:70000", "[::1", "[::1]8201", "a:"])
def test_malformed_allow_list_ports_are_refused(entry: str) -> None:
    with pytest.raises(ValueError, match="port|IPv6"):
        parse_allow_entry(entry)


def test_a_url_with_an_invalid_port_is_blocked_not_a_crash() -> None:
    with pytest.raises(BlockedUrlError, match="invalid port"):
        check_url("http://docs.example.com:99999/", UrlPolicy(), resolver=resolver_for({}))


def test_a_refusal_says_the_allow_list_is_read_at_start() -> None:
    with pytest.raises(AddressBlockedError, match="read when OpenGuru starts: restart it after changing the list"):
        check_url("http://10.0.0.5/", UrlPolicy(), resolver=lambda host, port: ["10.0.0.5"])


def test_a_policy_without_public_addresses_passes_only_what_the_list_names() -> None:
    closed = UrlPolicy(allow=("93.184.215.0/24",), schemes=("git",), public=False)
    assert check_url("git://a.example/r.git", closed, resolver=lambda host, port: ["93.184.215.14"]) == "a.example"
    with pytest.raises(AddressBlockedError, match=r"port 9418"):
        check_url("git://b.example/r.git", closed, resolver=lambda host, port: ["8.8.8.8"])
