"""Go's net/url `Parse` and `URL.String()`, for the model URI KServe hashes into every footprint.

KServe parses the pod's model URI with `url.Parse`, drops the userinfo, query and fragment and hashes
`URL.String()`. Python's urllib differs from Go on scheme case, escaping and errors, and one byte of
difference is a different footprint, so this is a port of the parts of Go 1.26's net/url that
`Parse(raw).String()` goes through (checked against Go 1.26.8 by tests/unit/kernelcache/test_gourl.py).
All work is on UTF-8 bytes, as in Go.
"""

from __future__ import annotations

import ipaddress
import re

import msgspec

from ..apivalidation import go_quote

_PATH, _HOST, _ZONE, _USER, _FRAGMENT = "path", "host", "zone", "user", "fragment"
_HEX = b"0123456789ABCDEF"


class URLError(ValueError):
    """`url.Parse` failed; the message is Go's error text (without the `parse "<url>": ` prefix)."""


class URL(msgspec.Struct, frozen=True):
    scheme: str = ""
    opaque: str = ""
    has_user: bool = False
    host: str = ""  # decoded, as Go keeps it
    path: str = ""  # decoded
    raw_path: str = ""
    omit_host: bool = False


def _ishex(c: int) -> bool:
    return 48 <= c <= 57 or 97 <= c <= 102 or 65 <= c <= 70


def _unhex(c: int) -> int:
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    return c - 55


def _alnum(c: int) -> bool:
    return 97 <= c <= 122 or 65 <= c <= 90 or 48 <= c <= 57


def _should_escape(c: int, mode: str) -> bool:
    if _alnum(c):
        return False
    ch = chr(c)
    if mode in (_HOST, _ZONE) and ch in "!$&'()*+,;=:[]<>\"":
        return False
    if ch in "-_.~":
        return False
    if ch in "$&+,/:;=?@":
        if mode == _PATH:
            return ch == "?"
        if mode == _USER:
            return ch in "@/?:"
        if mode == _FRAGMENT:
            return False
    return not (mode == _FRAGMENT and ch in "!()*")


def _unescape(s: bytes, mode: str) -> bytes:
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # %
            if i + 2 >= len(s) or not _ishex(s[i + 1]) or not _ishex(s[i + 2]):
                raise URLError(f"invalid URL escape {go_quote(s[i : i + 3])}")
            if mode == _HOST and _unhex(s[i + 1]) < 8 and s[i : i + 3] != b"%25":
                raise URLError(f"invalid URL escape {go_quote(s[i : i + 3])}")
            if mode == _ZONE:
                v = _unhex(s[i + 1]) << 4 | _unhex(s[i + 2])
                if s[i : i + 3] != b"%25" and v != 0x20 and _should_escape(v, _HOST):
                    raise URLError(f"invalid URL escape {go_quote(s[i : i + 3])}")
            i += 3
        else:
            if mode in (_HOST, _ZONE) and c < 0x80 and _should_escape(c, mode):
                raise URLError(f"invalid character {go_quote(s[i : i + 1])} in host name")
            i += 1
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == 0x25:
            out.append(_unhex(s[i + 1]) << 4 | _unhex(s[i + 2]))
            i += 3
        else:
            out.append(s[i])
            i += 1
    return bytes(out)


def _escape(s: bytes, mode: str) -> bytes:
    out = bytearray()
    for c in s:
        if _should_escape(c, mode):
            out += b"%" + bytes((_HEX[c >> 4], _HEX[c & 15]))
        else:
            out.append(c)
    return bytes(out)


def _valid_encoded(s: bytes, mode: str) -> bool:
    for c in s:
        if chr(c) in "!$&'()*+,;=:@[]%":
            continue
        if _should_escape(c, mode):
            return False
    return True


def _scheme(raw: bytes) -> tuple[bytes, bytes]:
    for i, c in enumerate(raw):
        if 97 <= c <= 122 or 65 <= c <= 90:
            continue
        if 48 <= c <= 57 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == 0x3A:  # :
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw
    return b"", raw


def _valid_optional_port(port: bytes) -> bool:
    if not port:
        return True
    if port[:1] != b":":
        return False
    return all(48 <= c <= 57 for c in port[1:])


def _port_error(port: bytes) -> URLError:
    return URLError(f"invalid port {go_quote(port)} after host")


def _parse_host(scheme: str, host: bytes) -> bytes:
    open_bracket = host.rfind(b"[")
    if open_bracket > 0:
        raise URLError("invalid IP-literal")
    if open_bracket == 0:
        close = host.rfind(b"]")
        if close < 0:
            raise URLError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not _valid_optional_port(colon_port):
            raise _port_error(colon_port)
        hostname = host[1:close]
        zone = hostname.find(b"%25")
        if zone >= 0:
            unescaped = _unescape(hostname[:zone], _HOST) + _unescape(hostname[zone:], _ZONE)
        else:
            unescaped = _unescape(hostname, _HOST)
        _check_ip_literal(unescaped)
        return b"[" + unescaped + b"]" + colon_port
    first = host.find(b":")
    if first != -1:
        last = host.rfind(b":")
        # Go 1.26 (urlstrictcolons): http and https hosts take the port from the first colon
        at = first if last != first and scheme in ("http", "https") else last
        if not _valid_optional_port(host[at:]):
            raise _port_error(host[at:])
    return _unescape(host, _HOST)


def _check_ip_literal(literal: bytes) -> None:
    """netip.ParseAddr: an IPv6 address (IPv4-mapped ones too, a zone allowed); IPv4 is not an IP-literal."""
    text = literal.decode("utf-8", "replace")
    address, _, zone = text.partition("%")
    if "%" in text and not zone:
        raise URLError(f"invalid host: ParseAddr({go_quote(literal)}): zone must be a non-empty string")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise URLError(f"invalid host: ParseAddr({go_quote(literal)}): unable to parse IP") from None
    if parsed.version == 4:
        raise URLError("invalid IP-literal")


def _valid_userinfo(s: bytes) -> bool:
    return all(_alnum(c) or chr(c) in "-._:~!$&'()*+,;=%@" for c in s)


def _parse_authority(scheme: str, authority: bytes) -> tuple[bool, bytes]:
    i = authority.rfind(b"@")
    host = _parse_host(scheme, authority if i < 0 else authority[i + 1 :])
    if i < 0:
        return False, host
    userinfo = authority[:i]
    if not _valid_userinfo(userinfo):
        raise URLError("net/url: invalid userinfo")
    for part in userinfo.split(b":", 1):
        _unescape(part, _USER)
    return True, host


def parse(raw: str) -> URL:
    """url.Parse(raw) (not via a request); raises URLError with Go's message."""
    # A lone surrogate cannot come from Go: its JSON decoder turns one into U+FFFD.
    data = re.sub("[\ud800-\udfff]", "\ufffd", raw).encode("utf-8")
    rest, _, frag = data.partition(b"#")
    if any(c < 0x20 or c == 0x7F for c in rest):
        raise URLError("net/url: invalid control character in URL")
    url = URL(path="*") if rest == b"*" else _parse(rest)
    if frag:
        _unescape(frag, _FRAGMENT)
    return url


def _parse(raw: bytes) -> URL:
    scheme_b, rest = _scheme(raw)
    scheme = scheme_b.decode("ascii").lower()
    rest = rest[:-1] if rest.endswith(b"?") and rest.count(b"?") == 1 else rest.partition(b"?")[0]
    if not rest.startswith(b"/"):
        if scheme:
            return URL(scheme=scheme, opaque=rest.decode("utf-8", "surrogateescape"))
        if b":" in rest.partition(b"/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    has_user, host, omit_host = False, b"", False
    if (scheme or not rest.startswith(b"///")) and rest.startswith(b"//"):
        authority, slash, tail = rest[2:].partition(b"/")
        rest = slash + tail
        has_user, host = _parse_authority(scheme, authority)
    elif scheme and rest.startswith(b"/"):
        omit_host = True
    path = _unescape(rest, _PATH)
    raw_path = b"" if _escape(path, _PATH) == rest else rest
    dec = lambda b: b.decode("utf-8", "surrogateescape")  # noqa: E731 - bytes kept exactly
    return URL(
        scheme=scheme, has_user=has_user, host=dec(host), path=dec(path), raw_path=dec(raw_path), omit_host=omit_host
    )


def _b(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def escaped_path(url: URL) -> bytes:
    raw, path = _b(url.raw_path), _b(url.path)
    if raw and _valid_encoded(raw, _PATH):
        try:
            if _unescape(raw, _PATH) == path:
                return raw
        except URLError:
            pass
    if url.path == "*":
        return b"*"
    return _escape(path, _PATH)


def string_without_user_query_fragment(url: URL) -> str:
    """URL.String() after KServe clears the userinfo, the query (ForceQuery too) and the fragment."""
    out = bytearray()
    if url.scheme:
        out += url.scheme.encode() + b":"
    if url.opaque:
        out += _b(url.opaque)
    else:
        if (url.scheme or url.host) and not (url.omit_host and not url.host):
            if url.host or url.path:
                out += b"//"
            if url.host:
                out += _escape(_b(url.host), _HOST)
        path = escaped_path(url)
        if path and path[:1] != b"/" and url.host:
            out += b"/"
        if not out and b":" in path.partition(b"/")[0]:
            out += b"./"
        out += path
    return out.decode("utf-8", "surrogateescape")
