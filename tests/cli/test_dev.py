"""`vault dev` stops everything it started (webserver, daemon, code server) on SIGTERM."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _as_a_background_job() -> None:
    """Start as a shell's background job does: with SIGINT ignored (which Dagster's SIGTERM
    handling would inherit, were it not reset)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_sigterm_stops_the_webserver_daemon_and_code_server(vault_paths, tmp_path) -> None:
    vault = Path(sys.executable).with_name("vault")
    command = [str(vault)] if vault.exists() else [shutil.which("vault") or "vault"]
    port = _free_port()
    process = subprocess.Popen([*command, "dev", "--home", str(vault_paths.home),
                                "-p", str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True,
                               preexec_fn=_as_a_background_job)
    try:
        deadline = time.monotonic() + 240
        while not _answers(f"http://127.0.0.1:{port}/server_info"):
            assert process.poll() is None, "vault dev exited before serving"
            assert time.monotonic() < deadline, "the webserver never answered"
            time.sleep(1)
        started = psutil.Process(process.pid).children(recursive=True)
        assert len(started) >= 2  # the webserver and the daemon at least
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=180)  # dagster dev waits up to 60 s for each of its two services
        _gone, alive = psutil.wait_procs(started, timeout=30)
        assert alive == [], [p.cmdline()[:4] for p in alive]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            with pytest.raises(ProcessLookupError):
                os.killpg(process.pid, 0)  # nothing of the group is left
