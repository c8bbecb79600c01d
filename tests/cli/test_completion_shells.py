"""`kubectl kcache completion SHELL` in the real shells: bash (its completion function called as bash calls
it, COMP_WORDS/COMP_CWORD in, COMPREPLY out) and zsh (typed in a terminal under tmux: Tab, then the screen),
for commands, flags (short ones after `-`), check ids and pods read offline from --from-file; for
`kubectl-kcache` run directly and for `kubectl kcache` through a kubectl whose completion knows no plugins."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kubectl_kcache.cli import run

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "examples/broken-cluster.yaml"
POD = "llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp"  # an InferenceService pod of team-llm in BROKEN


def env() -> dict[str, str]:
    """kubectl-kcache of this environment first on PATH, no kubeconfig (offline)."""
    bin_dir = str(Path(sys.executable).parent)
    assert (Path(bin_dir) / "kubectl-kcache").exists(), "kubectl-kcache is not installed beside this python"
    return {
        **os.environ,
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
        "KUBECONFIG": "/nonexistent",
        "HOME": os.environ.get("HOME", "/root"),
    }


def script(shell: str, capsys) -> str:
    assert run(["completion", shell]) == 0
    return capsys.readouterr().out


def test_every_shell_gets_a_script_and_a_bad_one_is_a_usage_error(capsys):
    for shell in ("bash", "zsh", "fish", "powershell"):
        text = script(shell, capsys)
        assert "kubectl-kcache __complete" in text, shell
    assert run(["completion", "tcsh"]) == 2
    assert "'tcsh' is not one of" in capsys.readouterr().err


# ---- bash ------------------------------------------------------------------------------------------

KUBECTL_OF_OLD = """
__start_kubectl() { COMPREPLY=(kubectl-own-candidate); }
complete -o default -F __start_kubectl kubectl
"""


def bash_complete(capsys, line: str, *, old_kubectl: bool = False) -> list[str]:
    """The candidates bash offers for `line` (the cursor at its end)."""
    words = shlex.split(line) + ([""] if line.endswith(" ") else [])
    prog = "__kubectl_kcache_kubectl" if words[0] == "kubectl" else "__kubectl_kcache"
    body = (
        (KUBECTL_OF_OLD if old_kubectl else "")
        + script("bash", capsys)
        + (
            f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
            f"COMP_LINE={shlex.quote(line)}; COMP_POINT={len(line)}; {prog} {words[0]} {shlex.quote(words[-1])}; "
            'printf "%s\\n" "${COMPREPLY[@]}"'
        )
    )
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", body], capture_output=True, text=True, cwd=ROOT, env=env(), timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


def test_bash_commands(capsys):
    assert bash_complete(capsys, "kubectl-kcache wh") == ["why-cached", "why-group", "why-not-cached", "why-not-ready"]
    assert "completion" in bash_complete(capsys, "kubectl-kcache ")


def test_bash_flags_long_and_short(capsys):
    assert bash_complete(capsys, "kubectl-kcache doctor --fa") == ["--fail-on"]
    dash = bash_complete(capsys, "kubectl-kcache doctor -")
    assert {"-A", "-f", "-n", "-o", "--all-namespaces", "--from-file"} <= set(dash)
    assert not [w for w in bash_complete(capsys, "kubectl-kcache doctor --") if not w.startswith("--")]
    assert bash_complete(capsys, "kubectl-kcache doctor -o ya") == ["yaml"]


def test_bash_check_ids(capsys):
    assert bash_complete(capsys, "kubectl-kcache doctor --only group-t") == ["group-taints"]
    assert sorted(bash_complete(capsys, "kubectl-kcache doctor --skip crds,con")) == [
        "crds,config",
        "crds,consumer-pull",
        "crds,control-plane",
    ]


def test_bash_pods_and_captures_offline_from_the_file(capsys):
    pods = bash_complete(capsys, f"kubectl-kcache why-not-cached -f {BROKEN} -n team-llm ")
    assert POD in pods and all("predictor" in p for p in pods)
    assert bash_complete(capsys, f"kubectl-kcache why-group --from-file {BROKEN} llama-3-1-8") == [POD]
    captures = bash_complete(capsys, f"kubectl-kcache why-group -f {BROKEN} --capture llama-3-1-8")
    assert captures == ["llama-3-1-8b-instruct-kcc-7d9c6b5f48"]
    files = bash_complete(capsys, "kubectl-kcache doctor --from-file examples/broken-")
    assert files == [BROKEN]  # file flags complete file names


def test_bash_through_a_kubectl_that_does_not_complete_plugins(capsys):
    assert bash_complete(capsys, "kubectl kcache sta", old_kubectl=True) == ["status"]
    assert bash_complete(capsys, "kubectl kcache doctor --only group-t", old_kubectl=True) == ["group-taints"]
    assert bash_complete(capsys, "kubectl get po", old_kubectl=True) == ["kubectl-own-candidate"]


# ---- zsh, typed in a terminal -------------------------------------------------------------------------


class Terminal:
    """zsh in a tmux window of 200 columns: type, press Tab, read the screen."""

    def __init__(self, rc: str) -> None:
        self.name = f"kcache-{uuid.uuid4().hex[:8]}"
        self.rc = rc
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                "200",
                "-y",
                "50",
                f"cd {shlex.quote(str(ROOT))} && ZDOTDIR={shlex.quote(rc)} exec zsh -i",
            ],
            check=True,
            env=env(),
            timeout=30,
        )
        self.wait_for("READY>")

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True, check=True, timeout=30
        ).stdout

    def wait_for(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} did not appear:\n{self.screen()}")

    def tab(self, line: str, expect: str) -> str:
        """Type `line`, press Tab, and return the screen once `expect` shows on it; then clear the line. (The
        screen as tmux gives it has no trailing spaces.)"""
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", line], check=True, timeout=10)
        subprocess.run(["tmux", "send-keys", "-t", self.name, "Tab"], check=True, timeout=10)
        try:
            return self.wait_for(expect)
        finally:
            subprocess.run(["tmux", "send-keys", "-t", self.name, "C-c"], check=True, timeout=10)
            subprocess.run(["tmux", "send-keys", "-t", self.name, "clear", "Enter"], check=True, timeout=10)
            time.sleep(0.3)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, timeout=10)


@pytest.fixture(scope="module")
def zsh(tmp_path_factory: pytest.TempPathFactory):
    for tool in ("zsh", "tmux"):
        assert shutil.which(tool), f"{tool} is not installed (run-tests installs it: apt-get install -y {tool})"
    rc = tmp_path_factory.mktemp("zdotdir")
    completion = subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", "completion", "zsh"],
        capture_output=True,
        text=True,
        check=True,
        env=env(),
    ).stdout
    (rc / "kcache.zsh").write_text(completion)
    (rc / ".zshrc").write_text(
        "autoload -U compinit && compinit -u\n"
        "_kubectl() { compadd kubectl-own-candidate }\ncompdef _kubectl kubectl\n"  # a kubectl of before 1.26
        f"source {shlex.quote(str(rc / 'kcache.zsh'))}\n"
        "PS1='READY> '\nLISTMAX=0\n"  # list what fits the screen without asking (doctor has over 100 flags)
    )
    term = Terminal(str(rc))
    yield term
    term.close()


def test_zsh_commands_and_flags(zsh):
    assert "READY> kubectl-kcache doctor" in zsh.tab("kubectl-kcache do", "kubectl-kcache doctor")
    assert "--fail-on" in zsh.tab("kubectl-kcache doctor --fa", "kubectl-kcache doctor --fail-on")
    listed = zsh.tab("kubectl-kcache doctor -", "--all-namespaces")
    assert "-A" in listed.split() and "-f" in listed.split()


def test_zsh_check_ids(zsh):
    zsh.tab("kubectl-kcache doctor --only group-t", "kubectl-kcache doctor --only group-taints")


def test_zsh_pods_offline_from_the_file(zsh):
    zsh.tab(f"kubectl-kcache why-not-cached -f {BROKEN} -n team-llm llama-3-1-8", f"-n team-llm {POD}")


def test_zsh_through_a_kubectl_that_does_not_complete_plugins(zsh):
    zsh.tab("kubectl kcache sta", "kubectl kcache status")
    zsh.tab("kubectl kcache doctor --only group-t", "kubectl kcache doctor --only group-taints")
    zsh.tab("kubectl get ", "kubectl get kubectl-own-candidate")


def test_zsh_shows_what_each_candidate_is(zsh):
    """Cobra style: a description beside each command, flag and check id (zsh draws `word -- description`)."""
    listed = zsh.tab("kubectl-kcache why-", "why-not-ready")
    assert "-- Which node group a producer pod's cache goes to" in listed and "-- alias of why-not-cached" in listed
    listed = zsh.tab("kubectl-kcache doctor --only capture", "complete captures become KernelCaches")
    assert "capture-identity" in listed
    zsh.tab("kubectl-kcache status --pro", "kubectl-kcache status --problems")


def test_descriptions_are_one_short_line_and_bash_drops_them(capsys):
    from kubectl_kcache.cli.complete import DESCRIPTION_WIDTH, described

    for words in (["doc"], ["doctor", "--"], ["doctor", "--only", ""], ["explain", "capture/"]):
        candidates, _ = described(words)
        assert candidates and all("\t" not in w and "\n" not in t for w, t in candidates)
        assert all(len(t) <= DESCRIPTION_WIDTH for _, t in candidates)
        assert any(t for _, t in candidates), words
    assert bash_complete(capsys, "kubectl-kcache doc") == ["doctor"]
    assert bash_complete(capsys, "kubectl-kcache doctor --only capture-s") == ["capture-sidecar"]
