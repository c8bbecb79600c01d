"""Nothing secret leaves (issue 33, point 2): the HTML page's command line, the `source` of every machine format,
the -v request log and error lines, and a dump's meta carry no credential (a token, a password, a client key, a
password in the server's URL); the impersonated UID is no credential and stays. `-o html` on a terminal creates
its page exclusively, never through a link planted at its predictable name, and an unwritable folder is one
error line with exit 2."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubectl_kcache.cli import run

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")
SECRETS = ("s3cr3t-token", "hunter2", "/keys/me.key", "urlpass")
CREDENTIAL_FLAGS = (
    "--token",
    "s3cr3t-token",
    "--password=hunter2",
    "--username",
    "me",
    "--client-key",
    "/keys/me.key",
    "--as",
    "bob",
    "--as-uid",
    "uid-1234",
)


def no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (secret, text[:2000])


@pytest.mark.parametrize("command", [["doctor"], ["why-not-cached", "-A"]])
def test_the_page_shows_the_command_without_credentials(command):
    proc = subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *command, "-f", HEALTHY, "-o", "html", *CREDENTIAL_FLAGS],
        capture_output=True,
        text=True,
        timeout=60,
    )
    page = proc.stdout
    assert proc.returncode == 0, proc.stderr
    no_secret(page)
    assert "--as-uid uid-1234" in page and "--token" in page  # said that one was given, never its value


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["--token", "x"], ["--token", "REDACTED"]),
        (["--token=x", "--password", "y"], ["--token=REDACTED", "--password", "REDACTED"]),
        (["-s", "https://u:urlpass@h:6443"], ["-s", "https://h:6443"]),
        (["--server=https://t0k@h/"], ["--server=https://h/"]),
        (["--as-uid", "u1", "--client-key", "/k"], ["--as-uid", "u1", "--client-key", "REDACTED"]),
        (["--token"], ["--token"]),
    ],
)
def test_redacted_command_lines(argv, shown):
    from kubectl_kcache.credentials import redact_argv

    assert redact_argv(argv) == shown


def test_redacted_urls():
    from kubectl_kcache.credentials import redact_url

    assert redact_url("https://admin:urlpass@10.0.0.1:6443/base?token=abc#x") == "https://10.0.0.1:6443/base"
    assert redact_url("https://10.0.0.1:6443") == "https://10.0.0.1:6443"
    assert redact_url("") == ""


def test_provenance_from_a_dump_that_recorded_a_password_in_its_server(tmp_path, capsys):
    doc = json.loads(json.dumps(__import__("yaml").safe_load(Path(HEALTHY).read_text())))
    doc["meta"]["server"] = "https://admin:urlpass@10.0.0.1:6443"
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(doc))
    for args in (["doctor", "-o", "json"], ["status", "-o", "json"], ["why-not-cached", "-A", "-o", "json"]):
        run([*args, "-f", str(path)])
        out = capsys.readouterr().out
        no_secret(out)
        assert json.loads(out)["source"]["server"] == "https://10.0.0.1:6443"


@pytest.mark.parametrize("level", ["6", "8", "9", "10"])
def test_log_and_errors_at_every_level_carry_no_credential(level):
    """An API server that does not answer: the request log and the error line name it without its password."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubectl_kcache",
            "status",
            "--server",
            "https://admin:urlpass@127.0.0.1:1",
            "--token",
            "s3cr3t-token",
            "--request-timeout",
            "2s",
            f"-v={level}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KUBECONFIG": "/nonexistent"},
    )
    assert proc.returncode == 3, proc.stderr
    no_secret(proc.stdout + proc.stderr)
    assert "https://127.0.0.1:1" in proc.stderr


def test_the_client_names_its_server_without_credentials():
    from kubectl_kcache.cli.flags import make_client

    client = make_client({"server": "https://admin:urlpass@127.0.0.1:6443", "token": "s3cr3t-token"})
    assert client.server == "https://127.0.0.1:6443"  # what provenance, dump meta, logs and errors say


# ---- -o html on a terminal --------------------------------------------------------------------------------


def on_terminal(args: list[str], cwd: Path | str) -> tuple[int, str]:
    """Run the command with a terminal as its standard output; (exit code, what it printed)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubectl_kcache", *args],
        cwd=cwd,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KUBECONFIG": "/nonexistent"},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    code = proc.wait(timeout=60)
    os.close(master)
    return code, b"".join(chunks).decode(errors="replace")


def test_html_on_a_terminal_never_writes_through_a_planted_link(tmp_path):
    target = tmp_path / "victim.txt"
    work = tmp_path / "work"
    work.mkdir()
    start = time.time()
    for second in range(-2, 30):  # the page's names for the next half minute, each a link to the victim
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(start + second))
        (work / f"kcache-report-inference-prod-{stamp}.html").symlink_to(target)
    code, out = on_terminal(["doctor", "-f", HEALTHY, "-o", "html"], work)
    assert code == 0, out
    assert not target.exists()
    pages = [p for p in work.iterdir() if not p.is_symlink()]
    assert len(pages) == 1 and pages[0].read_text().startswith("<!DOCTYPE html>")
    assert f"wrote {pages[0]}" in out


def test_html_on_a_terminal_in_an_unwritable_folder_is_exit_2():
    code, out = on_terminal(["doctor", "-f", HEALTHY, "-o", "html"], "/sys")
    assert code == 2, out
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot write the page "), out
    assert "Traceback" not in out and "internal error" not in out
