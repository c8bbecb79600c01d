#!/usr/bin/env python3
"""Builds the krew release of kubectl-kcache, reproducibly, and writes plugin.yaml for it.

    python3 krew-manifest/build.py [--out dist] [--manifest dist/plugin.yaml]
    python3 krew-manifest/build.py --lock-wheels NAME==VERSION

(`make dist`; `make release` runs krew-manifest/release.py, which also checks the tree and CHANGELOG.md.)

1. Fetches the artifacts pinned in krew-manifest/requirements.txt into a cache
   ($KCACHE_RELEASE_CACHE, else ~/.cache/kubectl-kcache-release) and checks each one's sha256; a warm
   cache downloads nothing, so a build works offline once it has run.
2. Takes the pure-Python files out of the pure artifacts (no C source, no __pycache__, no tests, no
   dist-info but the license files, which go to licenses/<dist>-<version>/) and adds the kubectl_kcache
   package of this tree (*.py and py.typed, as pip installs it) with kubectl_kcache/_build.py: the commit
   and its date (or SOURCE_DATE_EPOCH) for `kubectl kcache version` (kubectl_kcache/buildinfo.py).
3. For each platform in PLATFORMS (krew's os/arch), adds the compiled wheels that serve it, one per
   CPython version in PYTHONS and variant (glibc and musl on Linux), each variant's files in
   _platlib/cp3XY-<variant>/, and writes one executable zipapp, `kubectl-kcache`:
   `#!/usr/bin/env python3`, entries sorted, every timestamp 1980-01-01 00:00, modes 0644, deflate level 9.
   Its __main__.py is krew-manifest/zipapp_main.py with the table of those folders filled in: it picks
   the folder of the running interpreter (and says which versions it has when there is none), unpacks the
   zipapp into a cache folder so that bytecode is cached and extension modules can be loaded, and runs
   kubectl's completion hook instead of the command when called as `kubectl_complete-...` (a symlink).
4. Packs `LICENSE` and `kubectl-kcache` into <out>/kubectl-kcache-v<version>-<os>-<arch>.tar.gz: sorted,
   mtime 0, uid/gid 0, no owner names, modes 0644/0755, gzip header without name and with mtime 0. The same
   tree gives the same bytes (with the same zlib: the deflate output is zlib's).
5. Renders krew-manifest/plugin.yaml.tmpl with the version (kubectl_kcache/__init__.py) and one platform
   entry per archive (its URI and sha256) into <out>/plugin.yaml, and writes <out>/SHA256SUMS (as sha256sum
   prints it) for the archives. Neither is committed: they are made for each release.

--lock-wheels prints the requirements.txt entry of a compiled project: the sha256 of every wheel of that
version that one of the archives needs (downloading them into the cache), after checking that every
archive gets one for each Python version.

Only the standard library is used. The package index is $KCACHE_RELEASE_INDEX_URL, else $PIP_INDEX_URL,
else https://pypi.org/simple (PEP 691 JSON or PEP 503 HTML); a local $PIP_FIND_LINKS folder holding
the right file is used first.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import io
import itertools
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
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "krew-manifest"
LOCK = HERE / "requirements.txt"
TEMPLATE = HERE / "plugin.yaml.tmpl"
ZIP_MAIN = HERE / "zipapp_main.py"
PACKAGE = ROOT / "kubectl_kcache"
LICENSE = ROOT / "LICENSE"
VERSION_FILE = PACKAGE / "__init__.py"
BUILDINFO = PACKAGE / "buildinfo.py"
GENERATED = "kubectl_kcache/_build.py"  # written by each build, never taken from the tree
CHECKSUMS = "SHA256SUMS"

HOMEPAGE = "https://github.com/kserve/kubectl-kcache"
RELEASE_URI = HOMEPAGE + "/releases/download/{tag}/{archive}"
DEFAULT_INDEX = "https://pypi.org/simple"

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ZIP_LEVEL = 9
GZIP_LEVEL = 9
SHEBANG = b"#!/usr/bin/env python3\n"
BIN = "kubectl-kcache"
PLATLIB = "_platlib"

# The CPython versions every archive carries compiled wheels for (free-threaded builds are not served).
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14", "3.15")


@dataclass(frozen=True)
class Variant:
    name: str  # the folder suffix: _platlib/cp312-<name>
    platform_tag: re.Pattern[str]  # the wheel platform tags it takes
    libc: str  # the C library an interpreter must run on to use it ("" off Linux)


@dataclass(frozen=True)
class Platform:
    os: str  # krew's (Go's) names
    arch: str
    machine: str  # the architecture as wheel tags and os.uname() name it
    variants: tuple[Variant, ...]  # each gets one wheel of every compiled project for every Python

    @property
    def label(self) -> str:
        return f"{self.os}/{self.arch}"


def _linux(arch: str, machine: str) -> Platform:
    return Platform(
        "linux",
        arch,
        machine,
        (
            Variant("glibc", re.compile(rf"manylinux_\d+_\d+_{machine}"), "glibc"),
            Variant("musl", re.compile(rf"musllinux_\d+_\d+_{machine}"), "musl"),
        ),
    )


def _darwin(arch: str, machine: str) -> Platform:
    return Platform("darwin", arch, machine, (Variant("macos", re.compile(rf"macosx_\d+_\d+_{machine}"), ""),))


# Windows is not among them: krew links a plugin's `bin` as kubectl-<name>.exe there and only runs .exe
# entry points, which a Python zipapp is not (docs/install.md).
PLATFORMS = (
    _linux("amd64", "x86_64"),
    _linux("arm64", "aarch64"),
    _darwin("amd64", "x86_64"),
    _darwin("arm64", "arm64"),
)

# Never shipped: bytecode, C sources and tests; compiled files only inside _platlib/.
SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".pyx", ".pxd", ".pyc", ".pyo")
COMPILED_SUFFIXES = (".so", ".pyd", ".dylib", ".dll", ".exe")
EXTENSION_SUFFIXES = (".so", ".pyd")
TEST_DIRS = {"test", "tests", "__pycache__"}
TEST_FILE = re.compile(r"(^test_.*\.py$)|(_test\.py$)|(^conftest\.py$)")
LICENSE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|AUTHORS)", re.IGNORECASE)
# Packages without a pure wheel: which folder of their sdist is the importable pure-Python code.
SDIST_LAYOUT = {"pyyaml": {"lib/yaml/": "yaml/"}}


class BuildError(Exception):
    pass


@dataclass(frozen=True)
class Pin:
    name: str  # normalised project name
    version: str
    hashes: tuple[str, ...]  # sha256 of each artifact allowed
    filename: str | None  # given for a pin of one artifact


@dataclass(frozen=True)
class CompiledWheel:
    pin: Pin
    filename: str
    python: str  # "3.12"
    platform_tags: tuple[str, ...]
    suffix: str  # of its extension modules, e.g. .cpython-312-x86_64-linux-gnu.so
    files: tuple[tuple[str, bytes], ...]  # importable files, paths relative to the wheel's root


@dataclass(frozen=True)
class Archive:
    platform: Platform
    path: Path
    sha256: str
    zipapp: Path
    entries: tuple[str, ...]


@dataclass(frozen=True)
class Build:
    version: str
    archives: tuple[Archive, ...]  # in the order of PLATFORMS
    manifest_text: str

    def archive(self, os_: str, arch: str) -> Archive:
        return next(a for a in self.archives if (a.platform.os, a.platform.arch) == (os_, arch))


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path = LOCK) -> list[Pin]:
    """requirements.txt as pip reads it: `name==version --hash=sha256:...  # filename` for a pure artifact,
    `name==version --hash=sha256:... --hash=sha256:...` for a compiled project's wheels."""
    text = path.read_text().replace("\\\n", " ")
    pins = []
    for raw in text.splitlines():
        line, _, comment = raw.partition("#")
        if not line.strip():
            continue
        m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:\s+--hash=sha256:[0-9a-f]{64})+)\s*", line)
        if not m:
            raise BuildError(f"{path}: not `name==version --hash=sha256:<64 hex> ...`: {raw.strip()[:120]}")
        hashes = tuple(re.findall(r"[0-9a-f]{64}", m.group(3)))
        filename = comment.strip() or None
        if len(hashes) == 1 and (not filename or "/" in filename):
            raise BuildError(f"{path}: {m.group(1)}: the artifact's file name must follow as a comment")
        if len(hashes) > 1 and filename:
            raise BuildError(f"{path}: {m.group(1)}: a pin of several artifacts names no file")
        if len(set(hashes)) != len(hashes):
            raise BuildError(f"{path}: {m.group(1)}: a hash is given twice")
        pins.append(Pin(normalise(m.group(1)), m.group(2), hashes, filename))
    names = [p.name for p in pins]
    if len(set(names)) != len(names):
        raise BuildError(f"{path}: a project is pinned twice")
    return pins


def read_version() -> str:
    """The one version number: kubectl_kcache/__init__.py's __version__ (setup.cfg reads it too)."""
    m = re.search(r'^__version__ = "(\d+\.\d+\.\d+)"$', VERSION_FILE.read_text(), re.MULTILINE)
    if not m:
        raise BuildError(f'{VERSION_FILE}: no `__version__ = "X.Y.Z"` line')
    return m.group(1)


def build_module(version: str) -> bytes:
    """kubectl_kcache/_build.py for this tree: its commit, whether files differ from it, and its date."""
    spec = importlib.util.spec_from_file_location("kcache_buildinfo", BUILDINFO)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod.module_text(mod.from_git(ROOT, version)).encode()


def cache_dir() -> Path:
    given = os.environ.get("KCACHE_RELEASE_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubectl-kcache-release"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def archive_name(version: str, platform: Platform) -> str:
    return f"kubectl-kcache-v{version}-{platform.os}-{platform.arch}.tar.gz"


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


def index_files(project: str) -> list[tuple[str, str, str | None]]:
    """(file name, URL, sha256 if the index gives it) of every file the index lists for a project."""
    index = os.environ.get("KCACHE_RELEASE_INDEX_URL") or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX
    page = index.rstrip("/") + f"/{project}/"
    body, ctype = _get(page, accept="application/vnd.pypi.simple.v1+json, text/html;q=0.1")
    files: list[tuple[str, str, str | None]] = []
    if "json" in ctype:
        for f in json.loads(body).get("files", []):
            files.append((f["filename"], urllib.parse.urljoin(page, f["url"]), f.get("hashes", {}).get("sha256")))
    else:
        for href in re.findall(r'href="([^"]+)"', body.decode("utf-8", "replace")):
            url, _, frag = href.replace("&amp;", "&").partition("#")
            name = PurePosixPath(urllib.parse.unquote(urllib.parse.urlsplit(url).path)).name
            sha = frag.removeprefix("sha256=") if frag.startswith("sha256=") else None
            files.append((name, urllib.parse.urljoin(page, url), sha))
    return [f for f in files if f[0] and not f[0].startswith(".") and "/" not in f[0]]


def _from_index(pin: Pin, sha256: str) -> tuple[str, str]:
    for name, url, sha in index_files(pin.name):
        if sha == sha256 or (sha is None and name == pin.filename):
            return name, url
    raise BuildError(
        f"{pin.name}=={pin.version}: the index lists no file with sha256 {sha256}"
        + (f" ({pin.filename})" if pin.filename else "")
    )


def _project_of(filename: str) -> str:
    return normalise(filename.split("-", 1)[0])


def fetch(pin: Pin, sha256: str, cache: Path) -> tuple[str, bytes]:
    """One pinned artifact's file name and bytes, from the cache or fetched into it; always checked against
    its hash."""
    folder = cache / "artifacts" / sha256
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.startswith(".") and pin.filename in (None, path.name):
                data = path.read_bytes()
                if sha256_of(data) == sha256:
                    return path.name, data
    name, data = "", b""
    for local in os.environ.get("PIP_FIND_LINKS", "").split():
        candidates = [Path(local) / pin.filename] if pin.filename else sorted(Path(local).glob("*"))
        for path in candidates:
            if path.is_file() and _project_of(path.name) == pin.name and sha256_of(path.read_bytes()) == sha256:
                name, data = path.name, path.read_bytes()
                break
        if data:
            break
    if not data:
        name, url = _from_index(pin, sha256)
        print(f"build: downloading {url}", file=sys.stderr)
        data, _ = _get(url)
    got = sha256_of(data)
    if got != sha256:
        raise BuildError(f"{name}: sha256 {got}, but requirements.txt pins {sha256}")
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.{os.getpid()}"
    tmp.write_bytes(data)
    os.replace(tmp, folder / name)
    return name, data


# ---- reading artifacts ---------------------------------------------------------------------------------


def shipped(path: str) -> bool:
    """Whether an importable pure-Python file (path inside the zipapp) is shipped."""
    return shipped_compiled(path) and not path.endswith(COMPILED_SUFFIXES)


def shipped_compiled(path: str) -> bool:
    """Whether a file of a compiled wheel (path inside the wheel) is shipped: its extension modules too."""
    parts = path.split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return False
    return not parts[-1].endswith(SOURCE_SUFFIXES) and not TEST_FILE.search(parts[-1])


def wheel_tags(data: bytes, filename: str) -> tuple[str, ...]:
    """The `Tag:` lines (python-abi-platform) of a wheel's WHEEL file."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        meta = [n for n in zf.namelist() if re.fullmatch(r"[^/]+\.dist-info/WHEEL", n)]
        if len(meta) != 1:
            raise BuildError(f"{filename}: not one .dist-info/WHEEL file")
        text = zf.read(meta[0]).decode()
    tags = tuple(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:"))
    if not tags:
        raise BuildError(f"{filename}: its WHEEL file gives no tag")
    return tags


def filename_tags(filename: str) -> tuple[str, ...]:
    """The tags a wheel's file name claims (compressed tag sets expanded)."""
    parts = filename.removesuffix(".whl").split("-")
    if len(parts) not in (5, 6):
        raise BuildError(f"{filename}: not a wheel file name")
    py, abi, plat = (p.split(".") for p in parts[-3:])
    return tuple("-".join(t) for t in itertools.product(py, abi, plat))


def is_pure(tags: tuple[str, ...]) -> bool:
    return all(t.endswith("-none-any") for t in tags)


def wheel_python(tags: tuple[str, ...]) -> str | None:
    """The CPython version of a wheel built for one version's ABI ("3.12" for cp312-cp312-...); None for
    anything else (abi3, free-threaded, other interpreters)."""
    pythons = set()
    for tag in tags:
        py, abi, _ = tag.split("-")
        m = re.fullmatch(r"cp3(\d+)", py)
        if not m or abi != py:
            return None
        pythons.add(f"3.{m.group(1)}")
    return pythons.pop() if len(pythons) == 1 else None


def targets(platform_tags: tuple[str, ...]) -> list[tuple[Platform, Variant]]:
    """Which platforms and variants take a compiled wheel with these platform tags."""
    return [(p, v) for p in PLATFORMS for v in p.variants if any(v.platform_tag.fullmatch(t) for t in platform_tags)]


def serves(tags: tuple[str, ...]) -> list[tuple[Platform, Variant, str]]:
    """Which (platform, variant, Python) a compiled wheel with these tags is for."""
    python = wheel_python(tags)
    if python not in PYTHONS:
        return []
    return [(p, v, python) for p, v in targets(tuple(t.split("-")[2] for t in tags))]


def _license_path(pin: Pin, name: str) -> str:
    return f"licenses/{pin.name}-{pin.version}/{name}"


def wheel_files(pin: Pin, filename: str, data: bytes, keep=shipped) -> Iterator[tuple[str, bytes]]:
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
                    yield _license_path(pin, rest.removeprefix("licenses/")), zf.read(info)
                continue
            if top.endswith(".data"):
                raise BuildError(f"{filename}: has a .data folder ({name}); not handled")
            if keep(name):
                yield name, zf.read(info)
    if not licenses:
        raise BuildError(f"{filename}: no license file in its dist-info")


def sdist_files(pin: Pin, filename: str, data: bytes) -> Iterator[tuple[str, bytes]]:
    layout = SDIST_LAYOUT.get(pin.name)
    if layout is None:
        raise BuildError(f"{filename}: an sdist, but build.py knows no pure-Python layout for {pin.name}")
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
                yield _license_path(pin, rel), raw.read()
                continue
            for src, dst in layout.items():
                if rel.startswith(src):
                    path = dst + rel[len(src) :]
                    if shipped(path):
                        yield path, raw.read()
    if not licenses:
        raise BuildError(f"{filename}: no license file at its top")


def compiled_wheel(pin: Pin, filename: str, data: bytes, tags: tuple[str, ...]) -> CompiledWheel:
    python = wheel_python(tags)
    if python is None:
        raise BuildError(f"{filename}: not a wheel for one CPython version's ABI ({', '.join(tags)})")
    files = tuple((p, b) for p, b in wheel_files(pin, filename, data, keep=shipped_compiled))
    suffixes = {"." + PurePosixPath(p).name.split(".", 1)[1] for p, _ in files if p.endswith(EXTENSION_SUFFIXES)}
    if len(suffixes) != 1:
        raise BuildError(f"{filename}: its extension modules end in {sorted(suffixes) or 'nothing'}, not one suffix")
    return CompiledWheel(pin, filename, python, tuple(t.split("-")[2] for t in tags), suffixes.pop(), files)


def package_files() -> Iterator[tuple[str, bytes]]:
    """The plugin itself, as pip installs it (setup.cfg: packages kubectl_kcache.*, package_data py.typed)."""
    for path in sorted(PACKAGE.rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if path.is_file() and (path.suffix == ".py" or path.name == "py.typed") and shipped(rel) and rel != GENERATED:
            yield rel, path.read_bytes()


class Files(dict[str, bytes]):
    """A zipapp's files by path; a path added twice is an error, but for identical license files (every
    wheel of a compiled project carries the same one)."""

    def __init__(self) -> None:
        super().__init__()
        self.owner: dict[str, str] = {}

    def add(self, path: str, data: bytes, source: str) -> None:
        if path in self and not (path.startswith("licenses/") and self[path] == data):
            raise BuildError(f"{path} comes from both {self.owner[path]} and {source}")
        self[path] = data
        self.owner.setdefault(path, source)


def collect(pins: list[Pin], cache: Path, version: str) -> tuple[Files, list[CompiledWheel]]:
    """The pure files every zipapp holds (dependencies, this tree, licenses), and the compiled wheels."""
    pure = Files()
    compiled: list[CompiledWheel] = []
    for pin in pins:
        for sha in pin.hashes:
            filename, data = fetch(pin, sha, cache)
            if filename.endswith(".whl"):
                tags = wheel_tags(data, filename)
                if is_pure(tags):
                    items: Iterator[tuple[str, bytes]] = wheel_files(pin, filename, data)
                else:
                    wheel = compiled_wheel(pin, filename, data, tags)
                    compiled.append(wheel)
                    items = iter([(p, b) for p, b in wheel.files if p.startswith("licenses/")])
            elif filename.endswith(".tar.gz"):
                items = sdist_files(pin, filename, data)
            else:
                raise BuildError(f"{filename}: neither a wheel nor an sdist")
            for path, blob in items:
                pure.add(path, blob, filename)
    for path, blob in package_files():
        pure.add(path, blob, "this tree")
    pure.add(GENERATED, build_module(version), "build.py")
    pure.add("licenses/kubectl-kcache/LICENSE", LICENSE.read_bytes(), "this tree")
    bad = sorted(p for p in pure if not shipped(p) and not p.startswith("licenses/"))
    if bad:
        raise BuildError(f"compiled or test files would be shipped outside {PLATLIB}/: {bad[:5]}")
    return pure, compiled


Folders = dict[str, tuple[Variant, str, list[CompiledWheel]]]  # _platlib folder -> (variant, Python, wheels)


def platlib_folders(compiled: list[CompiledWheel], platform: Platform) -> Folders:
    """The _platlib folders of one platform's zipapp: folder -> (variant, Python, its wheels), with exactly
    one wheel of each compiled project for every variant and Python."""
    projects = sorted({w.pin.name for w in compiled})
    folders: Folders = {}
    for variant in platform.variants:
        for python in PYTHONS:
            folder = f"{PLATLIB}/cp{python.replace('.', '')}-{variant.name}"
            wheels = [w for w in compiled if w.python == python and (platform, variant) in targets(w.platform_tags)]
            for project in projects:
                mine = [w.filename for w in wheels if w.pin.name == project]
                if len(mine) != 1:
                    raise BuildError(
                        f"{platform.label} ({variant.name}), CPython {python}: "
                        f"{len(mine)} wheels of {project} pinned, not 1 {mine or ''}".rstrip()
                    )
            if wheels:
                suffixes = {w.suffix for w in wheels}
                if len(suffixes) != 1:
                    raise BuildError(f"{folder}: its wheels' extension suffixes differ: {sorted(suffixes)}")
                folders[folder] = (variant, python, wheels)
    return folders


def check_every_wheel_is_used(compiled: list[CompiledWheel]) -> None:
    for w in compiled:
        if w.python not in PYTHONS or not targets(w.platform_tags):
            raise BuildError(f"{w.filename}: pinned, but no archive takes it (PYTHONS, PLATFORMS)")


# ---- writing -------------------------------------------------------------------------------------------


def zip_main(platform: Platform, folders: Folders, files: Files) -> bytes:
    """zipapp_main.py with this zipapp's RELEASE, COMPILED and BUILD_ID (a hash of every other file)."""
    build_id = hashlib.sha256()
    for path in sorted(files):
        build_id.update(f"{path}\0{len(files[path])}\0".encode() + files[path])
    rows = "".join(
        f"    ({folder!r}, {wheels[0].suffix!r}, {platform.machine!r}, {variant.libc!r}, {python!r}),\n"
        for folder, (variant, python, wheels) in sorted(folders.items())
    )
    text = ZIP_MAIN.read_text()
    for name, value in (
        ("RELEASE", repr(platform.label)),
        ("BUILD_ID", repr(build_id.hexdigest()[:24])),
        ("COMPILED", "(\n" + rows + ")"),
    ):
        text, n = re.subn(
            rf"^{name} = \S+(?=  #)", lambda _m, n=name, v=value: f"{n} = {v}", text, count=1, flags=re.MULTILINE
        )
        if n != 1:
            raise BuildError(f"{ZIP_MAIN.name}: no `{name} = ...  # ...` line to fill in")
    return text.encode()


def zipapp_files(pure: Files, platform: Platform, compiled: list[CompiledWheel]) -> Files:
    files = Files()
    for path, data in pure.items():
        files.add(path, data, pure.owner[path])
    folders = platlib_folders(compiled, platform)
    for folder, (_, _, wheels) in folders.items():
        for wheel in wheels:
            for path, data in wheel.files:
                if not path.startswith("licenses/"):
                    files.add(f"{folder}/{path}", data, wheel.filename)
    files.add("__main__.py", zip_main(platform, folders, files), "build.py")
    return files


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


PLATFORM_ENTRY = """\
  - selector:
      matchLabels:
        os: {os}
        arch: {arch}
    uri: {uri}
    sha256: {sha256}
    bin: {bin}
    files:
    - from: {bin}
      to: .
    - from: LICENSE
      to: .
"""


def render_manifest(version: str, archives: list[tuple[Platform, str]]) -> str:
    """plugin.yaml for the archives, given as (platform, sha256)."""
    tag = f"v{version}"
    lines = TEMPLATE.read_text().splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    platforms = "".join(
        PLATFORM_ENTRY.format(
            os=p.os, arch=p.arch, sha256=sha, bin=BIN, uri=RELEASE_URI.format(tag=tag, archive=archive_name(version, p))
        )
        for p, sha in archives
    )
    body = string.Template("".join(lines)).substitute(version=tag, platforms=platforms.rstrip("\n"))
    header = (
        "# Generated by krew-manifest/build.py (make dist, make release) from krew-manifest/plugin.yaml.tmpl\n"
        f"# for the archives of v{version} it built beside this file.\n"
    )
    return header + body


def build(out: Path, cache: Path | None = None) -> Build:
    version = read_version()
    pure, compiled = collect(read_lock(), cache or cache_dir(), version)
    check_every_wheel_is_used(compiled)
    out.mkdir(parents=True, exist_ok=True)
    archives = []
    for platform in PLATFORMS:
        files = zipapp_files(pure, platform, compiled)
        app = zipapp_bytes(files)
        archive = archive_bytes({BIN: (app, 0o755), "LICENSE": (LICENSE.read_bytes(), 0o644)})
        archive_path = out / archive_name(version, platform)
        _write(archive_path, archive, 0o644)
        unpacked = out / archive_path.name.removesuffix(".tar.gz")
        unpacked.mkdir(exist_ok=True)
        _write(unpacked / BIN, app, 0o755)
        _write(unpacked / "LICENSE", LICENSE.read_bytes(), 0o644)
        archives.append(Archive(platform, archive_path, sha256_of(archive), unpacked / BIN, tuple(sorted(files))))
    manifest = render_manifest(version, [(a.platform, a.sha256) for a in archives])
    return Build(version, tuple(archives), manifest)


def _write(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_bytes(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


# ---- pinning a compiled project ------------------------------------------------------------------------


def lock_wheels(spec: str, cache: Path) -> str:
    """The requirements.txt entry for every wheel of NAME==VERSION that an archive takes."""
    m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", spec)
    if not m:
        raise BuildError(f"--lock-wheels: NAME==VERSION, not {spec!r}")
    name, version = normalise(m.group(1)), m.group(2)
    wanted = []
    for filename, _, sha in index_files(name):
        parts = filename.removesuffix(".whl").split("-")
        if (
            filename.endswith(".whl")
            and len(parts) in (5, 6)
            and parts[1] == version
            and sha
            and serves(filename_tags(filename))
        ):
            wanted.append(sha)
    if not wanted:
        raise BuildError(f"{name}=={version}: the index lists no wheel with a sha256 that an archive takes")
    pin = Pin(name, version, tuple(wanted), None)
    compiled = []
    for sha in wanted:
        filename, data = fetch(pin, sha, cache)
        compiled.append(compiled_wheel(pin, filename, data, wheel_tags(data, filename)))
    order: dict[str, tuple[int, str]] = {}
    for i, platform in enumerate(PLATFORMS):
        for folder, (_, _, wheels) in platlib_folders(compiled, platform).items():
            for w in wheels:
                order.setdefault(w.filename, (i, folder))
    shas = dict(zip((w.filename for w in compiled), wanted, strict=True))
    hashes = [shas[f] for f in sorted(order, key=lambda f: order[f])]
    return f"{m.group(1)}=={version} \\\n" + " \\\n".join(f"    --hash=sha256:{h}" for h in hashes) + "\n"


def checksums(archives: tuple[Archive, ...] | list[Archive]) -> str:
    """SHA256SUMS: one `<sha256>  <file name>` line per archive, as `sha256sum` prints and `sha256sum -c` reads."""
    return "".join(f"{a.sha256}  {a.path.name}\n" for a in archives)


def write_release_files(b: Build, out: Path, manifest: Path | None = None) -> tuple[Path, Path]:
    """plugin.yaml (at `manifest`, default <out>/plugin.yaml) and <out>/SHA256SUMS for a build."""
    manifest = manifest or out / "plugin.yaml"
    _write(manifest, b.manifest_text.encode(), 0o644)
    sums = out / CHECKSUMS
    _write(sums, checksums(b.archives).encode(), 0o644)
    return manifest, sums


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist", help="folder for the archives (default: dist)")
    ap.add_argument("--manifest", type=Path, help="where to write the krew manifest (default: <out>/plugin.yaml)")
    ap.add_argument(
        "--lock-wheels",
        metavar="NAME==VERSION",
        help="print the requirements.txt entry of a compiled project's wheels and exit",
    )
    args = ap.parse_args(argv)
    start = time.monotonic()
    try:
        if args.lock_wheels:
            print(lock_wheels(args.lock_wheels, cache_dir()), end="")
            return 0
        b = build(args.out)
    except BuildError as e:
        print(f"build: {e}", file=sys.stderr)
        return 2
    manifest, sums = write_release_files(b, args.out, args.manifest)
    for a in b.archives:
        print(
            f"{a.path}  sha256 {a.sha256}  {a.path.stat().st_size} bytes  "
            f"(zipapp {a.zipapp.stat().st_size} bytes, {len(a.entries)} files)"
        )
    print(
        f"{manifest} and {sums}: written for v{b.version}, {len(b.archives)} platforms  {time.monotonic() - start:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
