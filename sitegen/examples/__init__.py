"""The bundled example logs and the seeded generator that made them."""

from __future__ import annotations

from pathlib import Path

EXAMPLE_LOG_DIR = Path(__file__).parent / "logs"
