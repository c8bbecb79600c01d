#!/usr/bin/env python3
"""Builds the krew release of kubectl-kcache, reproducibly, and writes plugin.yaml for it.

    python3 krew-manifest/build.py [--out dist] [--manifest plugin.yaml] [--check]

1. Fetches the artifacts pinned in krew-manifest/requirements.txt into a cache
   ($KCACHE_RELEASE_CACHE, else ~/.cache/kubectl-kcache-release) and checks each one's sha256; a warm
   cache downloads nothing.
2. Takes the pure-Python files out of them (no compiled extension, no C source, no __pycache__, no tests,
   no dist-info but the license files, which go to licenses/<dist>-<version>/), adds the kubectl_kcache
   package of this tree (*.py and py.typed, as pip installs it) and writes one executable zipapp,
   `kubectl-kcache`: `#!/usr/bin/env python3`, entries sorted, every timestamp 1980-01-01 00:00,
   modes 0644, deflate level 9. Called by a name starting with `kubectl_complete-` (a symlink), it runs
   kubectl's completion hook instead of the command.
3. Packs `LICENSE` and `kubectl-kcache` into <out>/kubectl-kcache-v<version>.tar.gz: sorted, mtime 0,
   uid/gid 0, no owner names, modes 0644/0755, gzip header without name and with mtime 0. The same
   tree gives the same bytes (with the same zlib: the deflate output is zlib's).
4. Renders krew-manifest/plugin.yaml.tmpl with the version (setup.cfg) and the archive's sha256 into
   plugin.yaml (or checks that plugin.yaml says exactly that, with --check).

Only the standard library is used. The package index is $KCACHE_RELEASE_INDEX_URL, else $PIP_INDEX_URL,
else https://pypi.org/simple (PEP 691 JSON or PEP 503 HTML); a local $PIP_FIND_LINKS folder holding
the right file is used first.
"""

from __future__ import annotations

import argparse
import configparser
import gzip
import hashlib
import io
import json
import os
import re
import ssl
import string
import sys
import tarfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "krew-manifest"
LOCK = HERE / "requirements.txt"
TEMPLATE = HERE / "plugin.yaml.tmpl"
MANIFEST = ROOT / "plugin.yaml"
PACKAGE = ROOT / "kubectl_kcache"
LICENSE = ROOT / "LICENSE"
SETUP_CFG = ROOT / "setup.cfg"

REGENERATE = "python3 krew-manifest/build.py"
HOMEPAGE = "https://github.com/kserve/kubectl-kcache"
RELEASE_URI = HOMEPAGE + "/releases/download/{tag}/kubectl-kcache-{tag}.tar.gz"
DEFAULT_INDEX = "https://pypi.org/simple"

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ZIP_LEVEL = 9
GZIP_LEVEL = 9
SHEBANG = b"#!/usr/bin/env python3\n"
BIN = "kubectl-kcache"

# Never shipped: compiled extensions, their sources and bytecode (the archive is the same for every
# platform and Python version).
DROPPED_SUFFIXES = (".so", ".pyd", ".dylib", ".dll", ".exe", ".c", ".h", ".cpp", ".pyx", ".pxd", ".pyc", ".pyo")
TEST_DIRS = {"test", "tests", "__pycache__"}
TEST_FILE = re.compile(r"(^test_.*\.py$)|(_test\.py$)|(^conftest\.py$)")
LICENSE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|AUTHORS)", re.IGNORECASE)
# Packages without a pure wheel: which folder of their sdist is the importable pure-Python code.
SDIST_LAYOUT = {"pyyaml": {"lib/yaml/": "yaml/"}}

# The zipapp's __main__.py; BUILD_ID is a hash of every other file in the zipapp. Kept valid for any
# Python 3, so that an old one gets kubectl_kcache.__main__'s "needs Python 3.10" message.
ZIP_MAIN = '''\
# The entry point of the kubectl-kcache zipapp (written by krew-manifest/build.py).
# kubectl runs `kubectl-kcache ARGS` for `kubectl kcache ARGS`, and `kubectl_complete-kcache WORDS` to
# complete them: a symlink of that name to this file gets the completion hook.
#
# Python cannot cache the bytecode of modules imported from a zip, and compiling the Kubernetes client
# (~700 modules) takes seconds on every run. So the first run unpacks this zipapp's files into
# $KCACHE_ZIPAPP_CACHE (default ~/.cache/kubectl-kcache/zipapp)/BUILD_ID, owned by the user, and later
# runs import from there, where Python keeps the bytecode. Anything wrong with that folder, or
# KCACHE_ZIPAPP_UNPACK=0, and the modules are imported from the zip as usual. Deleting it is safe.
import os
import sys

BUILD_ID = "%(build_id)s"


def _private_dir(path):
    st = os.lstat(path)
    return os.path.isdir(path) and not os.path.islink(path) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _unpacked(archive):
    if sys.version_info < (3, 10) or os.environ.get("KCACHE_ZIPAPP_UNPACK", "1") == "0" or not os.path.isfile(archive):
        return None
    base = os.environ.get("KCACHE_ZIPAPP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "kubectl-kcache", "zipapp")
    if not os.path.isabs(base):
        return None
    target = os.path.join(base, BUILD_ID)
    if not os.path.isfile(os.path.join(target, ".complete")):
        import shutil
        import tempfile
        import zipfile

        os.makedirs(base, mode=0o700, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".unpack-", dir=base)
        try:
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp)
            open(os.path.join(tmp, ".complete"), "w").close()
            try:
                os.rename(tmp, target)
            except OSError:  # another run got there first
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if _private_dir(base) and _private_dir(target) and os.path.isfile(os.path.join(target, ".complete")):
        return target
    return None


try:
    _dir = _unpacked(os.path.dirname(os.path.abspath(__file__)))
except Exception:  # never fail because of the cache: the zip itself works
    _dir = None
if _dir:
    sys.path.insert(0, _dir)

if os.path.basename(sys.argv[0]).startswith("kubectl_complete-"):
    from kubectl_kcache.__main__ import complete as entry
else:
    from kubectl_kcache.__main__ import main as entry
entry()
'''


class BuildError(Exception):
    pass


@dataclass(frozen=True)
class Pin:
    name: str  # normalised project name
    version: str
    sha256: str
    filename: str


@dataclass(frozen=True)
class Build:
    version: str
    archive: Path
    sha256: str
    zipapp: Path
    manifest_text: str
    entries: tuple[str, ...]


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path = LOCK) -> list[Pin]:
    """requirements.txt as pip reads it (`name==version --hash=sha256:...  # filename`)."""
    text = path.read_text().replace("\\\n", " ")
    pins = []
    for raw in text.splitlines():
        line, _, comment = raw.partition("#")
        if not line.strip():
            continue
        m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)\s+--hash=sha256:([0-9a-f]{64})\s*", line)
        if not m:
            raise BuildError(f"{path}: not `name==version --hash=sha256:<64 hex>  # filename`: {raw.strip()}")
        filename = comment.strip()
        if not filename or "/" in filename:
            raise BuildError(f"{path}: {m.group(1)}: the artifact's file name must follow as a comment")
        pins.append(Pin(normalise(m.group(1)), m.group(2), m.group(3), filename))
    names = [p.name for p in pins]
    if len(set(names)) != len(names):
        raise BuildError(f"{path}: a project is pinned twice")
    return pins


def read_version() -> str:
    cfg = configparser.ConfigParser()
    cfg.read(SETUP_CFG)
    return cfg["metadata"]["version"].strip()


def cache_dir() -> Path:
    given = os.environ.get("KCACHE_RELEASE_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubectl-kcache-release"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- fetching ------------------------------------------------------------------------------------------

def _ssl_context() -> ssl.SSLContext:
    cafile = os.environ.get("SSL_CERT_FILE") or os.environ.get("PIP_CERT") or None
    return ssl.create_default_context(cafile=cafile)


def _get(url: str, accept: str | None = None) -> tuple[bytes, str]:
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    last: Exception | None = None
    for attempt in range(3):
        try:
            with urllib.request.urlopen(req, timeout=120, context=_ssl_context()) as resp:
                return resp.read(), resp.headers.get("Content-Type", "")
        except OSError as e:  # URLError and timeouts
            last = e
            time.sleep(1 + 2 * attempt)
    raise BuildError(f"cannot fetch {url}: {last}")


def _artifact_url(pin: Pin) -> str:
    index = (os.environ.get("KCACHE_RELEASE_INDEX_URL") or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX)
    page = index.rstrip("/") + f"/{pin.name}/"
    body, ctype = _get(page, accept="application/vnd.pypi.simple.v1+json, text/html;q=0.1")
    if "json" in ctype:
        for f in json.loads(body).get("files", []):
            if f.get("hashes", {}).get("sha256") == pin.sha256:
                return urllib.parse.urljoin(page, f["url"])
    else:
        for href in re.findall(r'href="([^"]+)"', body.decode("utf-8", "replace")):
            href = href.replace("&amp;", "&")
            url, _, frag = href.partition("#")
            if frag == f"sha256={pin.sha256}" or (not frag and url.rsplit("/", 1)[-1] == pin.filename):
                return urllib.parse.urljoin(page, url)
    raise BuildError(f"{pin.name}=={pin.version}: {page} lists no file with sha256 {pin.sha256} ({pin.filename})")


def fetch(pin: Pin, cache: Path) -> bytes:
    """The pinned artifact's bytes, from the cache or downloaded into it; always checked against its hash."""
    dest = cache / "artifacts" / pin.sha256 / pin.filename
    if dest.is_file():
        data = dest.read_bytes()
        if sha256_of(data) == pin.sha256:
            return data
    data = b""
    for folder in os.environ.get("PIP_FIND_LINKS", "").split():
        local = Path(folder) / pin.filename
        if local.is_file() and sha256_of(local.read_bytes()) == pin.sha256:
            data = local.read_bytes()
            break
    if not data:
        url = _artifact_url(pin)
        print(f"build: downloading {url}", file=sys.stderr)
        data, _ = _get(url)
    got = sha256_of(data)
    if got != pin.sha256:
        raise BuildError(f"{pin.filename}: sha256 {got}, but requirements.txt pins {pin.sha256}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, dest)
    return data


# ---- selecting files -------------------------------------------------------------------------------

def shipped(path: str) -> bool:
    """Whether an importable file (path inside the zipapp) is shipped."""
    parts = path.split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return False
    name = parts[-1]
    if name.endswith(DROPPED_SUFFIXES) or TEST_FILE.search(name):
        return False
    return True


def wheel_files(pin: Pin, data: bytes) -> Iterator[tuple[str, bytes]]:
    licenses = 0
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = info.filename
            top, _, rest = name.partition("/")
            if top.endswith(".dist-info"):
                if rest.startswith("licenses/") or LICENSE_FILE.match(rest):
                    licenses += 1
                    lic = rest.removeprefix("licenses/")
                    yield f"licenses/{pin.name}-{pin.version}/{lic}", zf.read(info)
                continue
            if top.endswith(".data"):
                raise BuildError(f"{pin.filename}: has a .data folder ({name}); not handled")
            if shipped(name):
                yield name, zf.read(info)
    if not licenses:
        raise BuildError(f"{pin.filename}: no license file in its dist-info")


def sdist_files(pin: Pin, data: bytes) -> Iterator[tuple[str, bytes]]:
    layout = SDIST_LAYOUT.get(pin.name)
    if layout is None:
        raise BuildError(f"{pin.filename}: an sdist, but build.py knows no pure-Python layout for {pin.name}")
    licenses = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
        for m in tf.getmembers():
            if not m.isfile():
                continue
            _, _, rel = m.name.partition("/")
            raw = tf.extractfile(m)
            assert raw is not None
            if LICENSE_FILE.match(rel) and "/" not in rel:
                licenses += 1
                yield f"licenses/{pin.name}-{pin.version}/{rel}", raw.read()
                continue
            for src, dst in layout.items():
                if rel.startswith(src):
                    path = dst + rel[len(src):]
                    if shipped(path):
                        yield path, raw.read()
    if not licenses:
        raise BuildError(f"{pin.filename}: no license file at its top")


def package_files() -> Iterator[tuple[str, bytes]]:
    """The plugin itself, as pip installs it (setup.cfg: packages kubectl_kcache.*, package_data py.typed)."""
    for path in sorted(PACKAGE.rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if path.is_file() and (path.suffix == ".py" or path.name == "py.typed") and shipped(rel):
            yield rel, path.read_bytes()


def collect(pins: list[Pin], cache: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    owner: dict[str, str] = {}

    def add(path: str, data: bytes, source: str) -> None:
        if path in files:
            raise BuildError(f"{path} comes from both {owner[path]} and {source}")
        files[path] = data
        owner[path] = source

    for pin in pins:
        data = fetch(pin, cache)
        if pin.filename.endswith(".whl"):
            if not re.search(r"-(py3|py2\.py3)-none-any\.whl$", pin.filename):
                raise BuildError(f"{pin.filename}: not a pure-Python wheel")
            items = wheel_files(pin, data)
        elif pin.filename.endswith(".tar.gz"):
            items = sdist_files(pin, data)
        else:
            raise BuildError(f"{pin.filename}: neither a wheel nor an sdist")
        for path, blob in items:
            add(path, blob, pin.filename)
    for path, blob in package_files():
        add(path, blob, "this tree")
    add("licenses/kubectl-kcache/LICENSE", LICENSE.read_bytes(), "this tree")
    build_id = hashlib.sha256()
    for path in sorted(files):
        build_id.update(f"{path}\0{len(files[path])}\0".encode() + files[path])
    add("__main__.py", (ZIP_MAIN % {"build_id": build_id.hexdigest()[:24]}).encode(), "build.py")
    bad = sorted(p for p in files if not shipped(p) and not p.startswith("licenses/"))
    if bad:
        raise BuildError(f"compiled or test files would be shipped: {bad[:5]}")
    return files


# ---- writing -------------------------------------------------------------------------------------------

def zipapp_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    buf.write(SHEBANG)
    with zipfile.ZipFile(buf, "w") as zf:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=ZIP_DATE)
            info.create_system = 3  # Unix, so that the mode below is read
            info.external_attr = 0o100644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, files[path], compress_type=zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL)
    return buf.getvalue()


def archive_bytes(members: dict[str, tuple[bytes, int]]) -> bytes:
    tar_buf = io.BytesIO()
    with tarfile.open(fileobj=tar_buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name in sorted(members):
            data, mode = members[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.type = tarfile.REGTYPE
            tf.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=GZIP_LEVEL, mtime=0) as gz:
        gz.write(tar_buf.getvalue())
    return out.getvalue()


def render_manifest(version: str, sha256: str) -> str:
    tag = f"v{version}"
    lines = TEMPLATE.read_text().splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    body = string.Template("".join(lines)).substitute(version=tag, sha256=sha256, uri=RELEASE_URI.format(tag=tag))
    header = (
        "# Generated by krew-manifest/build.py from krew-manifest/plugin.yaml.tmpl for the archive it builds\n"
        f"# from this tree: do not edit. After any change to kubectl_kcache/, run `{REGENERATE}`.\n"
    )
    return header + body


def archive_name(version: str) -> str:
    return f"kubectl-kcache-v{version}.tar.gz"


def build(out: Path, cache: Path | None = None) -> Build:
    version = read_version()
    files = collect(read_lock(), cache or cache_dir())
    app = zipapp_bytes(files)
    archive = archive_bytes({BIN: (app, 0o755), "LICENSE": (LICENSE.read_bytes(), 0o644)})
    sha = sha256_of(archive)

    out.mkdir(parents=True, exist_ok=True)
    archive_path = out / archive_name(version)
    _write(archive_path, archive, 0o644)
    unpacked = out / f"kubectl-kcache-v{version}"
    unpacked.mkdir(exist_ok=True)
    _write(unpacked / BIN, app, 0o755)
    _write(unpacked / "LICENSE", LICENSE.read_bytes(), 0o644)
    return Build(version, archive_path, sha, unpacked / BIN, render_manifest(version, sha), tuple(sorted(files)))


def _write(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_bytes(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist", help="folder for the archive (default: dist)")
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help="where to write the krew manifest")
    ap.add_argument("--check", action="store_true", help="do not write the manifest; exit 1 if it is out of date")
    args = ap.parse_args(argv)
    start = time.monotonic()
    try:
        b = build(args.out)
    except BuildError as e:
        print(f"build: {e}", file=sys.stderr)
        return 2
    current = args.manifest.read_text() if args.manifest.is_file() else None
    if args.check:
        if current != b.manifest_text:
            print(f"build: {args.manifest} does not match the archive built from this tree (sha256 {b.sha256}); "
                  f"run `{REGENERATE}`", file=sys.stderr)
            return 1
    elif current != b.manifest_text:
        _write(args.manifest, b.manifest_text.encode(), 0o644)
    print(f"{b.archive}  sha256 {b.sha256}  {b.archive.stat().st_size} bytes  "
          f"(zipapp {b.zipapp.stat().st_size} bytes, {len(b.entries)} files)  {time.monotonic() - start:.1f}s")
    print(f"{args.manifest}: {'checked' if args.check else 'written'} for v{b.version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
