"""A progress bar for long builds: on a terminal only, and only after the first second."""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
DELAY_SECONDS = 1.0


class ProgressBar:
    """Draw ``[=====>    ] 512/1,000 logs`` on a TTY; stay silent elsewhere (CI, pipes)."""

    def __init__(self, stream: TextIO | None = None, delay: float = DELAY_SECONDS) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.delay = delay
        self.total = 0
        self.done = 0
        self.started = 0.0
        self.drawn = False

    def start(self, total: int) -> None:
        """Announce how many logs will be read."""
        self.total, self.done, self.started = total, 0, time.monotonic()

    def advance(self) -> None:
        """Count one more log read and redraw (at most a few times a second)."""
        self.done += 1
        if not self.enabled or time.monotonic() - self.started < self.delay:
            return
        if self.done != self.total and self.done % max(1, self.total // 200):
            return
        filled = WIDTH * self.done // max(1, self.total)
        bar = "=" * filled + (">" if filled < WIDTH else "") + " " * (WIDTH - filled - 1)
        self.stream.write(f"\r[{bar[:WIDTH]}] {self.done:,}/{self.total:,} logs")
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        """Clear the bar so the summary starts on a clean line."""
        if self.drawn:
            self.stream.write("\r" + " " * (WIDTH + 30) + "\r")
            self.stream.flush()
