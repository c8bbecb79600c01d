"""Finding the input files (files, folders, stdin; a folder's non-regular files and macOS debris skipped with
a warning, an unreadable folder refused) and reading their bytes as UTF-8 (a BOM decides the encoding; every
input read up to `limits.max_input_bytes()`).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import InputError
from .limits import max_input_bytes, too_large

FILE_SUFFIXES = (".yaml", ".yml", ".json")
CHUNK = 1 << 20
MACOS_FOLDER = "__MACOSX"
# ---- finding the files ----------------------------------------------------------------------------


def stat_error(path: str, exc: OSError) -> InputError:
    if exc.errno == errno.ELOOP:
        return InputError(f"{path}: a symbolic link loop (the link points back to itself)")
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return InputError(f"{path}: a broken symbolic link (its target does not exist)")
        return InputError(f"{path}: no such file or folder")
    return InputError(f"{path}: cannot read: {exc.strerror}")


def _macos_debris(root: str, name: str) -> bool:
    """The AppleDouble files (`._x.yaml`) and `__MACOSX/` folder that macOS adds when it zips or unzips: its
    metadata, not Kubernetes objects."""
    return name.startswith("._") or MACOS_FOLDER in root.split(os.sep)


def find_files(paths: Iterable[str], warnings: list[str]) -> Iterator[str]:
    debris: list[str] = []
    for path in paths:
        if path == "-":
            yield path
            continue
        if not path:
            raise InputError("--from-file: an empty path (give a file, a folder, or - for standard input)")
        try:
            st = os.stat(path)
        except OSError as exc:
            raise stat_error(path, exc) from None
        if not stat.S_ISDIR(st.st_mode):
            yield path  # a file named on the command line may be a pipe (`<(kubectl get ...)`)
            continue
        for root, dirs, names in os.walk(path, onerror=_unreadable_folder):
            dirs.sort()
            for n in sorted(names):
                if not n.endswith(FILE_SUFFIXES):
                    continue
                full = os.path.join(root, n)
                if _macos_debris(root, n):
                    debris.append(full)
                    continue
                try:
                    st = os.stat(full)
                except OSError as exc:
                    warnings.append(f"skipped {stat_error(full, exc)}")
                    continue
                if not stat.S_ISREG(st.st_mode):
                    warnings.append(f"skipped {full}: not a regular file ({_file_type(st.st_mode)})")
                    continue
                yield full
    if debris:
        shown = ", ".join(debris[:3]) + (f" and {len(debris) - 3} more" if len(debris) > 3 else "")
        warnings.append(
            f"skipped {len(debris)} macOS metadata file{'s' if len(debris) > 1 else ''} (._* and "
            f"{MACOS_FOLDER}/, written when an archive is made or opened on macOS): {shown}"
        )


def _unreadable_folder(exc: OSError) -> None:
    """A folder that cannot be listed holds objects nobody sees: skipped, its objects would be reported
    missing."""
    where = exc.filename if exc.filename is not None else "a folder"
    raise InputError(f"{where}: cannot read the folder: {exc.strerror or exc}")


def _file_type(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return name
    return "not a file"


# ---- bytes and text -------------------------------------------------------------------------------

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def read_bytes(path: str) -> bytes:
    """The file's content as UTF-8 (a BOM decides the encoding; none: UTF-8)."""
    try:
        if path == "-":
            if sys.stdin is None or sys.stdin.closed:
                raise InputError("--from-file -: standard input is closed")
            stream = getattr(sys.stdin, "buffer", None)
            data = _read_bounded(path, stream) if stream is not None else _read_text(path, sys.stdin)
        else:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = _read_file(path, fh, st.st_size) if stat.S_ISREG(st.st_mode) else _read_bounded(path, fh)
    except InputError:
        raise
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder") from None
    except OSError as exc:
        if path == "-":
            raise InputError(f"--from-file -: cannot read standard input: {exc.strerror or exc}") from None
        raise (
            stat_error(path, exc)
            if exc.errno in (errno.ELOOP, errno.ENOENT)
            else InputError(f"{path}: cannot read: {exc.strerror}")
        ) from None
    except ValueError:  # a closed stdin
        raise InputError("--from-file -: standard input is closed") from None
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            if encoding == "utf-8":
                return data[len(bom) :]
            try:
                return data[len(bom) :].decode(encoding).encode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{shown_path(path)}: not valid {encoding.upper()} text") from None
    return data


def shown_path(path: str) -> str:
    return "standard input" if path == "-" else path


def check_size(path: str, size: int) -> None:
    """A regular file whose size is known is refused before a byte of it is read."""
    if size > max_input_bytes():
        raise too_large(shown_path(path), size)


def _read_file(path: str, fh: Any, size: int) -> bytes:
    """A regular file: its size when opened, read at once (one copy); then whatever it grew by since, read as
    a stream is, up to the cap."""
    check_size(path, size)
    data: bytes = fh.read(size)
    more = _read_bounded(path, fh, len(data), binary_ok=True)
    return data + more if more else data


def _read_text(path: str, stream: Any) -> bytes:
    """A text stream without bytes under it (an embedding program's stdin), read up to the cap too."""
    text: str = stream.read(max_input_bytes() + 1)
    data = text.encode("utf-8")
    if len(text) > max_input_bytes() or len(data) > max_input_bytes():
        raise too_large(shown_path(path))
    return data


def _read_bounded(path: str, stream: Any, size: int = 0, binary_ok: bool = False) -> bytes:
    """A stream that may never end (a device, a pipe) read in chunks: binary data (a NUL byte outside UTF-16
    or UTF-32 text) is refused at its first chunk, anything past the cap as too large."""
    chunks: list[bytes] = []
    limit = max_input_bytes()
    wide = False
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return b"".join(chunks)
        if not chunks:
            wide = binary_ok or chunk.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff"))
        if not wide and b"\0" in chunk:
            raise InputError(f"{shown_path(path)}: not text (it holds NUL bytes): give a YAML or JSON file")
        size += len(chunk)
        if size > limit:
            raise too_large(shown_path(path))
        chunks.append(chunk)
