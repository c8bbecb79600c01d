"""The README's two commands on a Python that refuses `pip install` into itself (PEP 668, as Debian's,
Ubuntu's and Homebrew's do): a Python prefix of its own, made from the interpreter running the tests, with
an EXTERNALLY-MANAGED marker in its stdlib folder; a copy of this checkout; the README's first line run
there as written (the doctor runs on the bundled example), and the second one's install step
(`./run-tests --install-only`: the suite itself is not run again from inside it). Needs PyPI (pip)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = "[externally-managed]\nError=This Python is managed by the test (PEP 668): use a virtual environment.\n"


def readme_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert block, "README.md has no sh block"
    return block.group(1).strip().splitlines()


@pytest.fixture(scope="module")
def managed_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python prefix <tmp>/bin/python3 with its own empty site-packages (pip only), its stdlib linked from
    the running interpreter's, and the PEP 668 marker in its stdlib folder. Returns its bin folder."""
    prefix = tmp_path_factory.mktemp("managed-python")
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (prefix / "bin").mkdir()
    real = Path(sys._base_executable).resolve()  # type: ignore[attr-defined]  # not a venv's link
    shutil.copy2(real, prefix / "bin" / version)  # a copy: Python finds its prefix from where it lies
    (prefix / "bin" / "python3").symlink_to(version)
    stdlib = Path(sysconfig.get_paths(vars={"installed_base": sys.base_prefix, "base": sys.base_prefix})["stdlib"])
    lib = prefix / "lib" / version
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name not in ("site-packages", "dist-packages", "EXTERNALLY-MANAGED"):
            (lib / entry.name).symlink_to(entry)
    (lib / "site-packages").mkdir()
    python = prefix / "bin" / "python3"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    probe = "import sys, sysconfig; print(sys.prefix, sysconfig.get_path('stdlib'))"
    where = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert where.returncode == 0, where.stderr
    assert where.stdout.split() == [str(prefix), str(lib)], where.stdout
    ensurepip = subprocess.run(
        [str(python), "-m", "ensurepip", "--default-pip"], capture_output=True, text=True, env=env, timeout=300
    )
    assert ensurepip.returncode == 0, ensurepip.stderr
    (lib / "EXTERNALLY-MANAGED").write_text(MARKER)
    return prefix / "bin"


def checkout(dest: Path) -> Path:
    """The files git tracks (as they are in the working tree), without any .venv."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in names.decode().split("\0"):
        src = ROOT / name
        if name and src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def user_env(bin_dir: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CI"))}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and not Path(p, "python3").exists()]
    return {
        **env,
        "PATH": os.pathsep.join([str(bin_dir), *path, "/usr/bin", "/bin"]),
        "HOME": str(home),
        "NO_COLOR": "1",
    }


def test_pip_install_into_this_python_is_refused(managed_python: Path, tmp_path: Path) -> None:
    """What the README said before: the test's Python refuses it as Debian's does (so the tests below mean it)."""
    proc = subprocess.run(
        ["python3", "-m", "pip", "install", "."],
        cwd=checkout(tmp_path / "repo"),
        env=user_env(managed_python, tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "externally-managed-environment" in proc.stderr, proc.stderr


def test_readme_first_command_installs_and_runs_the_doctor(managed_python: Path, tmp_path: Path) -> None:
    first = readme_commands()[0]
    repo = checkout(tmp_path / "repo")
    proc = subprocess.run(
        ["bash", "-c", first],
        cwd=repo,
        env=user_env(managed_python, tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert re.search(r"^\d+ errors, \d+ warnings, .* in \d+ checks$", proc.stdout, re.MULTILINE), proc.stdout[-2000:]
    assert (repo / ".venv" / "bin" / "kubectl-kcache").is_file()
    assert not list((managed_python.parent / "lib").glob("python3*/site-packages/kubectl_kcache*"))
    again = subprocess.run(
        [
            str(repo / ".venv" / "bin" / "kubectl-kcache"),
            "doctor",
            "--from-file",
            "examples/broken-cluster.yaml",
            "-o",
            "json",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 1 and '"errors"' in again.stdout, again.stderr


def test_readme_second_command_installs_into_a_venv_of_the_checkout(managed_python: Path, tmp_path: Path) -> None:
    second = readme_commands()[1]
    assert second == "./run-tests"
    repo = checkout(tmp_path / "repo")
    proc = subprocess.run(
        [second, "--install-only"],
        cwd=repo,
        env=user_env(managed_python, tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "making a virtual environment in .venv/" in proc.stderr
    venv = repo / ".venv" / "bin"
    for tool in ("kubectl-kcache", "kubectl_complete-kcache", "pytest", "ruff", "mypy", "lint-imports"):
        assert (venv / tool).is_file(), tool
    assert not list((managed_python.parent / "lib").glob("python3*/site-packages/pytest*"))
    version = subprocess.run([str(venv / "kubectl-kcache"), "version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("kubectl-kcache "), version.stderr
