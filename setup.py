"""setuptools' build step with one addition: kubectl_kcache/_build.py, the commit and date of the build
(kubectl_kcache/buildinfo.py), so that `kubectl kcache version` says which commit a pip install came from."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUILDINFO = ROOT / "kubectl_kcache" / "buildinfo.py"


def _buildinfo() -> ModuleType:
    """buildinfo.py on its own (its package's dependencies are not installed yet at build time)."""
    spec = importlib.util.spec_from_file_location("_kcache_buildinfo", BUILDINFO)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _version() -> str:
    import re

    text = (ROOT / "kubectl_kcache" / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE).group(1)


class BuildWithCommit(build_py):
    def run(self) -> None:
        super().run()
        info = _buildinfo()
        target = Path(self.build_lib) / "kubectl_kcache" / "_build.py"
        target.write_text(info.module_text(info.from_git(ROOT, _version())))


setup(cmdclass={"build_py": BuildWithCommit})
