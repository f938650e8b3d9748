"""The exact browser code that respondents run, read from where it is served.

The "How this works" page prints these bytes and their SHA-256, and the respondent page
loads the same files with an ``integrity`` attribute, so the browser itself refuses code
that differs from what the page shows.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import staticfiles_storage


def served_bytes(path: str, *, hashed: bool = True) -> bytes:
    """The body WhiteNoise sends for ``{% static path %}`` (or the unhashed URL)."""
    if settings.WHITENOISE_USE_FINDERS:
        return Path(finders.find(path)).read_bytes()
    return _stored_bytes(path, hashed)


@lru_cache(maxsize=32)
def _stored_bytes(path: str, hashed: bool) -> bytes:
    """Collected static files do not change while the app runs: read each once."""
    name = staticfiles_storage.stored_name(path) if hashed else path
    with staticfiles_storage.open(name) as handle:
        return handle.read()


def unhashed_url(path: str) -> str:
    """The URL a relative ES module import resolves to (imports are not rewritten)."""
    return settings.STATIC_URL + path


def sha256_hex(path: str, *, hashed: bool = True) -> str:
    return hashlib.sha256(served_bytes(path, hashed=hashed)).hexdigest()


def integrity(path: str, *, hashed: bool = True) -> str:
    """A Subresource Integrity value for the served file."""
    digest = hashlib.sha384(served_bytes(path, hashed=hashed)).digest()
    return "sha384-" + base64.b64encode(digest).decode()
