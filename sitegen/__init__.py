"""sitegen: a static history server for Apache DataFusion Ballista event logs.

For scripts, ``sitegen.build(log_dirs, output)`` builds a site and returns its report, and
``sitegen.read_log(path)`` reads and classifies one log. Both are imported on first use, so
``import sitegen`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["SitegenError", "UsageError", "__version__", "build", "read_log"]

if TYPE_CHECKING:
    from sitegen.errors import SitegenError, UsageError
    from sitegen.eventlog.reader import read_log
    from sitegen.python_api import build
    from sitegen.version import __version__

# Public name -> (module, attribute), imported on first access.
_LAZY = {
    "build": ("sitegen.python_api", "build"),
    "read_log": ("sitegen.eventlog.reader", "read_log"),
    "SitegenError": ("sitegen.errors", "SitegenError"),
    "UsageError": ("sitegen.errors", "UsageError"),
    "__version__": ("sitegen.version", "__version__"),
}


def __getattr__(name: str) -> Any:
    """Import a public API name on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the public names too, before they are imported."""
    return sorted({*globals(), *_LAZY})
