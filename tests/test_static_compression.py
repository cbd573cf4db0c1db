"""Static files are served compressed with Brotli as well as gzip (issue 14).

collectstatic runs WhiteNoise's compressor on every file; compressing the whole tree takes
minutes on a busy machine, so this runs the same compressor on one script.
"""

from pathlib import Path

import brotli
from django.conf import settings
from django.utils.module_loading import import_string
from whitenoise.compress import Compressor
from whitenoise.storage import CompressedManifestStaticFilesStorage

from config import settings as project_settings


def test_the_project_storage_compresses_static_files():
    storage = import_string(project_settings.STORAGES["staticfiles"]["BACKEND"])
    assert issubclass(storage, CompressedManifestStaticFilesStorage)


def test_whitenoise_writes_brotli_and_gzip_and_brotli_is_smaller(tmp_path):
    script = Path(settings.BASE_DIR, "static", "js", "plots.js")
    copy = tmp_path / script.name
    copy.write_bytes(script.read_bytes())
    written = {Path(name).suffix: Path(name) for name in Compressor(quiet=True).compress(str(copy))}
    assert set(written) == {".gz", ".br"}
    assert brotli.decompress(written[".br"].read_bytes()) == copy.read_bytes()
    assert written[".br"].stat().st_size < written[".gz"].stat().st_size < copy.stat().st_size
