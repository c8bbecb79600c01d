"""IP addresses in an anonymized dump: every IPv4 and IPv6 address (and an IPv4 address written with dashes, as
in the node name `ip-10-0-1-11`) is replaced by an address of a documentation or benchmark range, the same
address by the same one, so that a pod's hostIP still names its node's InternalIP. Loopback and unspecified
addresses say nothing about a cluster and are kept."""

from __future__ import annotations

import ipaddress
import re

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# a letter or digit on either side makes it part of a longer word (a uid, a hash); a dot after it or a colon
# before it, a version (an image tag)
_V4 = re.compile(rf"(?<![A-Za-z0-9.:])({_OCTET})([.-]){_OCTET}\2{_OCTET}\2{_OCTET}(?![A-Za-z0-9]|\.\d)")
_V6 = re.compile(r"(?<![A-Za-z0-9:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![A-Za-z0-9:])")


class Addresses:
    def __init__(self) -> None:
        self.v4: dict[str, str] = {}
        self.v6: dict[str, str] = {}

    def replace(self, text: str) -> str:
        if any(ch.isdigit() for ch in text):
            text = _V4.sub(self._v4, text)
        if "::" in text or text.count(":") >= 7:
            text = _V6.sub(self._v6, text)
        return text

    def _v4(self, m: re.Match[str]) -> str:
        sep = m.group(2)
        address = ipaddress.IPv4Address(m.group().replace("-", "."))
        if address.is_loopback or address.is_unspecified or address.is_multicast or str(address) == "255.255.255.255":
            return m.group()
        key = str(address)
        if key not in self.v4:
            n = len(self.v4) + 1  # 198.18.0.0/15, for benchmarks: never a real cluster's
            self.v4[key] = str(ipaddress.IPv4Address("198.18.0.0") + n)
        return self.v4[key].replace(".", sep)

    def _v6(self, m: re.Match[str]) -> str:
        try:
            address = ipaddress.IPv6Address(m.group())
        except ValueError:  # a time of day, a MAC address
            return m.group()
        if address.is_loopback or address.is_unspecified:
            return m.group()
        key = str(address)
        if key not in self.v6:
            self.v6[key] = str(ipaddress.IPv6Address("2001:db8::") + len(self.v6) + 1)  # documentation range
        return self.v6[key]
