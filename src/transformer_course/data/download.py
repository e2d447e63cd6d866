"""Downloading Multi30k once, checked, into a cache: the corpus wherever the learner is.

The six files of task 1 that the course reads (German and English of the training, validation and
2016 test splits, 1.3 MB gzipped) come from the dataset's own repository, at the commit that
published them, so that the bytes never change under a run. `pooch <https://www.fatiando.org/pooch>`_
does the work: each file is fetched once, with a progress bar, into a temporary file beside its
place in the cache, checked against its SHA-256 and only then renamed into place. A download that
fails, is interrupted or brings other bytes leaves nothing behind, and the next call starts it
again.

Two environment variables change where files come from and go:

* ``MULTI30K_BASE_URL``: a mirror, any folder served over HTTP(S) that holds the same six files
  (for places where GitHub is unreachable); the checksums still apply.
* ``TRANSFORMER_COURSE_CACHE``: the cache folder (default: the user's cache folder, e.g.
  ``$XDG_CACHE_HOME/transformer-course`` or ``~/.cache/transformer-course`` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

import pooch
import requests

CACHE_VARIABLE = "TRANSFORMER_COURSE_CACHE"
MIRROR_VARIABLE = "MULTI30K_BASE_URL"

# The dataset's repository at the commit that published task 1's files (2018), folder data/task1/raw.
MULTI30K_BASE_URL = (
    "https://raw.githubusercontent.com/multi30k/dataset/c9be912dc05a3ebf9ae5bb5f7f58c1791cda43ab/data/task1/raw/"
)
# SHA-256 of each file as published there.
MULTI30K_FILES = {
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
}


class DownloadError(OSError):
    """A file could not be downloaded, or arrived with other bytes; the message says which and what to do."""


def cache_directory() -> Path:
    """The course's cache folder: ``$TRANSFORMER_COURSE_CACHE``, else the user's cache folder (XDG on Linux)."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE]).expanduser()
    return Path(pooch.os_cache("transformer-course"))


def multi30k_base_url() -> str:
    """Where the files are downloaded from: ``$MULTI30K_BASE_URL`` (a mirror), else the dataset's repository."""
    url = os.environ.get(MIRROR_VARIABLE) or MULTI30K_BASE_URL
    return url if url.endswith("/") else url + "/"


def download_multi30k(progress: bool = True) -> Path:
    """The folder in the cache that holds Multi30k's six files, downloading those it lacks.

    Files already there are checked against their SHA-256 (and fetched again if they differ), so a
    second call reads the cache without the network.

    Args:
        progress: show a progress bar per file while downloading.

    Returns:
        ``<cache>/multi30k``, in the dataset's own layout (``train.de.gz`` …), for
        :func:`~transformer_course.data.load_multi30k`.

    Raises:
        DownloadError: a file arrived with another SHA-256 (both digests named), or could not be
            fetched (its URL named: not found, or no network), with what to do instead.
    """
    base_url = multi30k_base_url()
    folder = cache_directory() / "multi30k"
    files = pooch.create(path=folder, base_url=base_url, registry=MULTI30K_FILES, retry_if_failed=0)
    fetched: dict[str, str] = {}

    def download(url: str, output_file: str, known: pooch.Pooch) -> None:
        """pooch's HTTP download, noting the SHA-256 of what arrived so that a mismatch can name it."""
        pooch.HTTPDownloader(progressbar=progress, timeout=60)(url, output_file, known)
        fetched[url] = pooch.file_hash(output_file)

    for name in MULTI30K_FILES:
        url = base_url + name
        try:
            files.fetch(name, downloader=download)
        except requests.exceptions.RequestException as error:
            raise DownloadError(
                f"could not download {url}: {_reason(error)}. Without access to it, download the six files "
                f"({', '.join(MULTI30K_FILES)}) some other way and pass their folder as --data DIR "
                f"(data=DIR in Python), or set {MIRROR_VARIABLE} to a mirror that serves them"
            ) from None
        except ValueError:
            if url not in fetched:
                raise
            raise DownloadError(
                f"{name} downloaded from {url} is not Multi30k's file: its SHA-256 is {fetched[url]}, expected "
                f"{MULTI30K_FILES[name]}; nothing was kept in {folder}"
            ) from None
    return folder


def _reason(error: requests.exceptions.RequestException) -> str:
    """What went wrong, in a few words: the HTTP status, or that the server could not be reached."""
    if isinstance(error, requests.exceptions.HTTPError) and error.response is not None:
        return f"HTTP {error.response.status_code} {error.response.reason}"
    if isinstance(error, requests.exceptions.ConnectionError):
        return "no connection to the server (no network, or the host is unreachable)"
    return f"the download broke off ({type(error).__name__})"
