"""Multi30k without a local copy: the six files downloaded once into the cache, checked, from the dataset's
repository or a mirror; and each way a download can fail, against a mirror served on 127.0.0.1."""

import hashlib
import shutil
import sys

import pytest
from multi30k_mirror import SHARED_MULTI30K, serving, unreachable_url

from transformer_course.cli import main
from transformer_course.data import load_multi30k
from transformer_course.data.download import (
    MULTI30K_BASE_URL,
    MULTI30K_FILES,
    DownloadError,
    cache_directory,
    download_multi30k,
    multi30k_base_url,
)

pytestmark = pytest.mark.skipif(
    not (SHARED_MULTI30K / "train.de.gz").is_file(),
    reason=f"the course's copy of Multi30k, which these tests serve as a mirror, is not at {SHARED_MULTI30K}",
)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """A cache folder of the test's own."""
    monkeypatch.setenv("TRANSFORMER_COURSE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "multi30k"


@pytest.fixture
def mirror(monkeypatch):
    """MULTI30K_BASE_URL pointing at the course's copy, served on 127.0.0.1."""
    with serving(SHARED_MULTI30K) as url:
        monkeypatch.setenv("MULTI30K_BASE_URL", url)
        yield url


def _changed_copy(directory, name):
    """A copy of the six files in which ``name`` has one byte more."""
    shutil.copytree(SHARED_MULTI30K, directory)
    with (directory / name).open("ab") as file:
        file.write(b"\0")
    return directory


def test_the_checksums_are_those_of_the_datasets_files():
    digests = {name: hashlib.sha256((SHARED_MULTI30K / name).read_bytes()).hexdigest() for name in MULTI30K_FILES}
    assert digests == MULTI30K_FILES


def test_by_default_the_files_come_from_the_datasets_repository_at_a_fixed_commit(monkeypatch):
    monkeypatch.delenv("MULTI30K_BASE_URL", raising=False)
    assert multi30k_base_url() == MULTI30K_BASE_URL
    assert MULTI30K_BASE_URL.startswith("https://raw.githubusercontent.com/multi30k/dataset/")
    commit = MULTI30K_BASE_URL.split("/")[5]
    assert len(commit) == 40 and all(digit in "0123456789abcdef" for digit in commit), commit
    assert MULTI30K_BASE_URL.endswith("/data/task1/raw/")


def test_without_a_path_the_corpus_is_downloaded_and_reads_as_the_local_copy(mirror):
    assert load_multi30k() == load_multi30k(SHARED_MULTI30K)


def test_the_download_fills_the_cache_folder_with_the_six_files(mirror, cache):
    assert download_multi30k(progress=False) == cache
    assert sorted(path.name for path in cache.iterdir()) == sorted(MULTI30K_FILES)


def test_a_second_call_reads_the_cache_without_the_network(mirror, monkeypatch):
    download_multi30k(progress=False)
    monkeypatch.setenv("MULTI30K_BASE_URL", unreachable_url())
    assert sorted(path.name for path in download_multi30k(progress=False).iterdir()) == sorted(MULTI30K_FILES)


def test_a_download_shows_a_progress_bar(mirror, capsys):
    download_multi30k(progress=True)
    assert "100%" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME is the Linux convention")
def test_the_cache_is_in_the_users_xdg_cache_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSFORMER_COURSE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == tmp_path / "xdg" / "transformer-course"


def test_transformer_course_cache_names_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_COURSE_CACHE", str(tmp_path / "elsewhere"))
    assert cache_directory() == tmp_path / "elsewhere"


def test_a_file_with_other_bytes_is_refused_naming_it_and_both_digests(tmp_path, monkeypatch):
    changed = _changed_copy(tmp_path / "changed", "train.en.gz")
    with serving(changed) as url:
        monkeypatch.setenv("MULTI30K_BASE_URL", url)
        with pytest.raises(DownloadError) as refused:
            download_multi30k(progress=False)
    actual = hashlib.sha256((changed / "train.en.gz").read_bytes()).hexdigest()
    message = str(refused.value)
    assert f"train.en.gz downloaded from {url}train.en.gz is not Multi30k's file" in message
    assert actual in message and MULTI30K_FILES["train.en.gz"] in message


def test_a_file_with_other_bytes_is_not_kept_in_the_cache(tmp_path, monkeypatch, cache):
    with serving(_changed_copy(tmp_path / "changed", "train.en.gz")) as url:
        monkeypatch.setenv("MULTI30K_BASE_URL", url)
        with pytest.raises(DownloadError):
            download_multi30k(progress=False)
    assert sorted(path.name for path in cache.iterdir()) == ["train.de.gz"]  # the one before it, and nothing else


def test_a_changed_file_in_the_cache_is_downloaded_again(mirror, cache):
    download_multi30k(progress=False)
    (cache / "val.de.gz").write_bytes(b"not gzip")
    download_multi30k(progress=False)
    assert (cache / "val.de.gz").read_bytes() == (SHARED_MULTI30K / "val.de.gz").read_bytes()


def test_a_missing_file_names_its_url_and_how_to_do_without(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    with serving(tmp_path / "empty") as url:
        monkeypatch.setenv("MULTI30K_BASE_URL", url)
        with pytest.raises(DownloadError) as refused:
            download_multi30k(progress=False)
    message = str(refused.value)
    assert message.startswith(f"could not download {url}train.de.gz: HTTP 404")
    assert "--data DIR" in message and "MULTI30K_BASE_URL" in message


def test_no_network_names_the_url_and_how_to_do_without(monkeypatch):
    url = unreachable_url()
    monkeypatch.setenv("MULTI30K_BASE_URL", url)
    with pytest.raises(DownloadError) as refused:
        download_multi30k(progress=False)
    message = str(refused.value)
    assert message.startswith(f"could not download {url}train.de.gz: no connection to the server")
    assert "--data DIR" in message and "MULTI30K_BASE_URL" in message


def test_a_download_broken_off_half_way_leaves_nothing_in_the_cache(monkeypatch, cache):
    with serving(SHARED_MULTI30K, broken_off=True) as url:
        monkeypatch.setenv("MULTI30K_BASE_URL", url)
        with pytest.raises(DownloadError, match="train.de.gz: the download broke off"):
            download_multi30k(progress=False)
    assert list(cache.iterdir()) == []


def test_after_a_broken_off_download_the_next_call_starts_it_again(monkeypatch, cache):
    with serving(SHARED_MULTI30K, broken_off=True) as url:
        monkeypatch.setenv("MULTI30K_BASE_URL", url)
        with pytest.raises(DownloadError):
            download_multi30k(progress=False)
    with serving(SHARED_MULTI30K) as url:
        monkeypatch.setenv("MULTI30K_BASE_URL", url)
        download_multi30k(progress=False)
    assert (cache / "train.de.gz").read_bytes() == (SHARED_MULTI30K / "train.de.gz").read_bytes()


def test_the_train_command_reports_a_failed_download_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MULTI30K_BASE_URL", unreachable_url())
    code = main(["train", "--task", "multi30k", "--max-steps", "1", "--out", str(tmp_path / "run"), "--no-progress"])
    error = capsys.readouterr().err.strip()
    assert code == 1 and error.startswith("error: could not download") and len(error.splitlines()) == 1
