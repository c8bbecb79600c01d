# %-formatting and no annotations keep this file valid on any Python 3, so that an old one gets as far as
# kubectl_kcache/__main__.py's "needs Python 3.10" line.
# ruff: noqa: UP031, UP036
"""The entry point of the kubectl-kcache zipapp. krew-manifest/build.py writes this file into each zipapp as
__main__.py, with RELEASE, BUILD_ID and COMPILED filled in.

kubectl runs `kubectl-kcache ARGS` for `kubectl kcache ARGS`, and `kubectl_complete-kcache WORDS` to complete
them: a symlink of that name to the zipapp gets the completion hook.

Two things cannot be done from inside a zip: Python cannot cache the bytecode of modules imported from it
(compiling the Kubernetes client, ~700 modules, takes seconds on every run), and a compiled extension module
(msgspec's) cannot be loaded from it at all. So the first run unpacks the zipapp into
$KCACHE_ZIPAPP_CACHE (default ~/.cache/kubectl-kcache/zipapp)/BUILD_ID, owned by the user, and every run
imports from there, its bytecode cached there (even under PYTHONDONTWRITEBYTECODE: `_keep_bytecode`). With
KCACHE_ZIPAPP_UNPACK=0, or when that folder cannot be used (not ours, writable by others, cannot be made), the
pure-Python modules are imported from the zip and only the compiled packages this Python needs are extracted,
into a private temporary folder that is removed at exit.

The zipapp carries its compiled packages once per interpreter they serve, in _platlib/<python>-<variant>/
(cp312-glibc, cp312-musl, cp312-macos). COMPILED lists, for each folder, what an interpreter must have to load
it: the file suffix of its extension modules (importlib.machinery.EXTENSION_SUFFIXES[0], which names the Python
version and ABI, e.g. .cpython-312-x86_64-linux-gnu.so), the machine (macOS suffixes name none) and, on Linux,
the C library (musl builds of CPython before 3.11 use the glibc suffix).
"""

import contextlib
import os
import sys

RELEASE = "dev"  # krew's os/arch of the archive
BUILD_ID = "dev"  # a hash of every other file in the zipapp
COMPILED = ()  # (folder, extension suffix, machine, C library or "", Python version)


def same_machine(a, b):
    """Whether two names of a machine (os.uname().machine, a wheel's platform tag) are the same one."""
    aliases = {"amd64": "x86_64", "aarch64": "arm64"}
    return aliases.get(a.lower(), a.lower()) == aliases.get(b.lower(), b.lower())


def compiled_folder(compiled, suffix, machine, libc):
    """The folder of compiled packages for an interpreter that loads extension modules ending with `suffix`,
    on `machine` with the C library `libc`; None when the zipapp has none for it."""
    for folder, want_suffix, want_machine, want_libc, _ in compiled:
        if suffix == want_suffix and same_machine(want_machine, machine) and want_libc in ("", libc):
            return folder
    return None


def _version_key(version):
    return tuple(int(part) for part in version.split("."))


def no_compiled_message(compiled, release, interpreter, suffix, machine, libc, executable):
    versions = sorted({entry[4] for entry in compiled}, key=_version_key)
    machines = sorted({entry[2] for entry in compiled})
    libcs = sorted({entry[3] for entry in compiled if entry[3]})
    return (
        "kubectl-kcache: this release (%s) bundles its compiled dependency (msgspec) for CPython %s on %s%s, "
        "not for this python3: %s on %s%s (extension suffix %s, %s); put a matching python3 first on PATH"
        % (
            release,
            ", ".join(versions) or "no version",
            " or ".join(machines) or "no machine",
            " with " + " or ".join(libcs) if libcs else "",
            interpreter,
            machine,
            " with " + libc if libc else "",
            suffix,
            executable,
        )
    )


def _interpreter():
    name = {"cpython": "CPython", "pypy": "PyPy"}.get(sys.implementation.name, sys.implementation.name)
    return "%s %d.%d" % (name, sys.version_info[0], sys.version_info[1])


def _libc():
    """glibc or musl on Linux; "" elsewhere, or for a C library that is neither."""
    if not sys.platform.startswith("linux"):
        return ""
    try:
        if (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return "glibc"
    except (ValueError, OSError):  # musl defines no such name
        pass
    try:
        return "musl" if any(name.startswith("ld-musl-") for name in os.listdir("/lib")) else ""
    except OSError:
        return ""


def _machine():
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()


def _private_dir(path):
    st = os.lstat(path)
    return os.path.isdir(path) and not os.path.islink(path) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _unpacked(archive):
    """The folder this zipapp is unpacked in (unpacking it the first time), or None if it cannot be used."""
    if os.environ.get("KCACHE_ZIPAPP_UNPACK", "1") == "0" or not os.path.isfile(archive):
        return None
    base = os.environ.get("KCACHE_ZIPAPP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "kubectl-kcache", "zipapp"
    )
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
            with contextlib.suppress(OSError):  # another run got there first
                os.rename(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if _private_dir(base) and _private_dir(target) and os.path.isfile(os.path.join(target, ".complete")):
        return target
    return None


def _extracted(archive, folder):
    """`folder` of the zipapp extracted into a private temporary folder that is removed at exit."""
    if os.path.isdir(archive):  # run as an unpacked tree: nothing to extract
        return os.path.join(archive, folder)
    import atexit
    import shutil
    import tempfile
    import zipfile

    tmp = tempfile.mkdtemp(prefix="kubectl-kcache-")
    atexit.register(shutil.rmtree, tmp, True)
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(tmp, [n for n in zf.namelist() if n.startswith(folder + "/") and not n.endswith("/")])
    return os.path.join(tmp, folder)


def _import_paths(archive):
    """The folders to import from, ahead of the zipapp itself, and the unpacked folder among them (None when the
    zipapp is read in place); exits 2 when this Python has no compiled packages in the zipapp."""
    folder = None
    if COMPILED:
        import importlib.machinery

        suffix, machine, libc = importlib.machinery.EXTENSION_SUFFIXES[0], _machine(), _libc()
        folder = compiled_folder(COMPILED, suffix, machine, libc)
        if folder is None:
            sys.stderr.write(
                no_compiled_message(COMPILED, RELEASE, _interpreter(), suffix, machine, libc, sys.executable) + "\n"
            )
            sys.exit(2)
    try:
        root = _unpacked(archive)
    except Exception:  # noqa: BLE001 - never fail because of the cache: the zip itself works
        root = None
    if root:
        return [root] + ([os.path.join(root, folder)] if folder else []), root
    return ([_extracted(archive, folder)] if folder else []), None


def _keep_bytecode(root):
    """With PYTHONDONTWRITEBYTECODE or -B, Python reads cached bytecode but never writes it, and each run compiled
    again the ~250 modules a command imports (~0.2 s of every command). The modules this run imported from the
    unpacked folder, this program's own cache, are compiled into it when the process ends (once: the next run
    finds them); nothing is written anywhere else."""
    import importlib.util
    import py_compile

    prefix = root + os.sep
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(prefix) and path.endswith(".py"):
            cached = importlib.util.cache_from_source(path)
            if not os.path.exists(cached):
                with contextlib.suppress(Exception):  # a cache, never a reason to fail
                    py_compile.compile(path, cfile=cached, doraise=True)


def main():
    if sys.version_info >= (3, 10):  # older ones only get kubectl_kcache's "needs Python 3.10" line
        paths, unpacked = _import_paths(os.path.dirname(os.path.abspath(__file__)))
        sys.path[:0] = paths
        if unpacked and sys.dont_write_bytecode:
            import atexit

            atexit.register(_keep_bytecode, unpacked)
    if os.path.basename(sys.argv[0]).startswith("kubectl_complete-"):
        from kubectl_kcache.__main__ import complete as entry
    else:
        from kubectl_kcache.__main__ import main as entry
    entry()


if __name__ == "__main__":
    main()
