"""sitegen: a static history server for Apache DataFusion Ballista event logs."""

from __future__ import annotations

__version__ = "0.1.0"
