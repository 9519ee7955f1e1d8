"""Object-storage URLs (``s3://bucket/prefix/``): tell them from paths, and hide credentials."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Any fsspec URL: a scheme of two letters or more (``C:\\`` is a Windows drive, not a scheme).
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
HIDDEN = "***"
# Query parameters that carry a secret (a SAS token's signature, a presigned URL's).
_SECRET_PARAMS = re.compile(r"sig|signature|secret|token|key|credential|password", re.I)


def is_url(text: object) -> bool:
    """Tell whether ``text`` is an object-storage URL rather than a local path."""
    return isinstance(text, str) and bool(_SCHEME.match(text)) and not text.startswith("file://")


def redact(url: str) -> str:
    """Return ``url`` with any credentials in it (``user:secret@``, signed queries) hidden."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(k, HIDDEN if _SECRET_PARAMS.search(k) else v) for k, v in pairs], safe="*"
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """Return ``url`` without its ``user:secret@`` part, and the user and secret (or None)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, secret = userinfo.partition(":")
    bare = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    from urllib.parse import unquote

    return bare, unquote(user), unquote(secret) if secret else None


def as_prefix(url: str) -> str:
    """Return ``url`` ending with one slash: a prefix of object keys, as a directory is."""
    return url.rstrip("/") + "/"
