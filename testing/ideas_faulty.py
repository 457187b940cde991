"""An extractive backend with planted faults, for the ideas stage's bounded workers: it
runs in the worker process (it is pickled there), so each fault hits one worker only."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence

from vault_pipeline.ideas.backends.extractive import ExtractiveBackend
from vault_pipeline.llm.backends.base import Answer, Request

HANG, CRASH, HUGE = "2401.00097", "2401.00098", "2401.00099"


class FaultyBackend(ExtractiveBackend):
    """Hangs on HANG, dies of SIGSEGV on CRASH, allocates past any cap on HUGE."""

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        for request in requests:
            if request.paper.arxiv_id == HANG:
                time.sleep(3600)
            if request.paper.arxiv_id == CRASH:
                os.kill(os.getpid(), signal.SIGSEGV)
            if request.paper.arxiv_id == HUGE:
                request.paper.markdown() * (1 << 30)  # gigabytes: past the worker's cap
        return super().generate(requests)
