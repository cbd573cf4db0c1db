"""The content version beside a host's file cache (serving/version_file.py): every worker sees
every change at its next read, however close together the changes come."""

import subprocess
import sys
import textwrap

import pytest
from django.core.cache.backends.filebased import FileBasedCache
from django.test import override_settings

from serving import content_cache
from serving.version_file import FILE_NAME, VersionFile
from tests.conftest import SEED_CARD_URL


@pytest.fixture
def file_cache(tmp_path):
    """Production's cache on one host without Redis: Django's file cache in a directory."""
    with override_settings(
        CACHES={"default": {"BACKEND": content_cache.FILE_CACHE, "LOCATION": str(tmp_path)}}
    ):
        yield tmp_path


def test_a_token_written_by_one_worker_is_read_by_another_at_once(tmp_path):
    reader, writer = VersionFile(tmp_path), VersionFile(tmp_path)
    assert reader.read() is None
    first = writer.add("a" * 32)
    assert reader.read() == first
    # Back to back, far inside one tick of the clock that stamps a file's times: each is seen.
    for count in range(500):
        token = f"{count:032x}"
        writer.write(token)
        assert reader.read() == token


def test_of_workers_starting_together_all_agree_on_the_first_token(tmp_path):
    first, second = VersionFile(tmp_path), VersionFile(tmp_path)
    assert first.add("1" * 32) == "1" * 32
    assert second.add("2" * 32) == "1" * 32
    assert second.read() == first.read() == "1" * 32


def test_a_token_written_by_another_process_is_read_at_once(tmp_path):
    reader = VersionFile(tmp_path)
    reader.add("0" * 32)
    assert reader.read() == "0" * 32  # the reader's descriptor is open before the other writes
    script = f"""
        import sys
        sys.path.insert(0, {str(content_cache.settings.BASE_DIR)!r})
        from serving.version_file import VersionFile
        VersionFile({str(tmp_path)!r}).write("f" * 32)
    """
    subprocess.run([sys.executable, "-c", textwrap.dedent(script)], check=True)
    assert reader.read() == "f" * 32


def test_a_removed_file_is_opened_again_by_name(tmp_path):
    reader = VersionFile(tmp_path)
    reader.add("0" * 32)
    assert reader.read() == "0" * 32
    (tmp_path / FILE_NAME).unlink()  # the directory cleared, the reader's descriptor still open
    assert reader.read() is None
    VersionFile(tmp_path).add("9" * 32)
    assert reader.read() == "9" * 32


@pytest.mark.django_db
def test_with_the_file_cache_the_version_is_read_from_its_own_file(file_cache, seed_card, monkeypatch):
    reads = []
    read = FileBasedCache.get

    def counting_get(self, key, *args, **kwargs):
        reads.append(key)
        return read(self, key, *args, **kwargs)

    monkeypatch.setattr(FileBasedCache, "get", counting_get)
    first = content_cache.content_version()
    assert (file_cache / FILE_NAME).read_text() == first
    seed_card.save()
    assert content_cache.content_version() not in {first, None}
    assert (file_cache / FILE_NAME).read_text() == content_cache.content_version()
    assert content_cache.VERSION_KEY not in reads


@pytest.mark.django_db
def test_with_the_file_cache_a_lost_version_is_never_reused(file_cache, seed_card):
    first = content_cache.content_version()
    seed_card.save()
    second = content_cache.content_version()
    (file_cache / FILE_NAME).unlink()
    assert content_cache.content_version() not in {first, second}


@pytest.mark.django_db
def test_with_the_file_cache_a_saved_edit_shows_at_once(file_cache, client, seed_card):
    assert client.get(SEED_CARD_URL, {"answer": "shown"}).status_code == 200
    seed_card.picture_it = "Picture a lift that leaves when it is full."
    seed_card.save()
    assert (
        "Picture a lift that leaves when it is full."
        in client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    )


@pytest.mark.django_db
def test_with_the_file_cache_a_run_written_changes_the_runs_token_in_its_own_file(file_cache, student):
    from felab_sim.models import RUNS, Run

    content, runs = content_cache.content_version(), RUNS.read()
    assert (file_cache / "felab-runs-version").read_text() == runs != content
    Run.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [1]}, started_by=student)
    assert RUNS.read() not in {runs, None}
    assert (file_cache / "felab-runs-version").read_text() == RUNS.read()
    assert content_cache.content_version() == content  # a run is not course content


def test_two_tokens_cannot_share_a_name():
    with pytest.raises(ValueError, match="'content'"):
        content_cache.SharedToken("content")
