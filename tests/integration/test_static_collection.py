"""Static files are collected when their sources changed or a collected file is missing, and only then."""

from __future__ import annotations

import os
from pathlib import Path

from django.test import override_settings

from backend.core.static_files import collect_static_if_changed


def test_a_start_collects_only_what_changed(tmp_path: Path) -> None:
    sources, root = tmp_path / "src", tmp_path / "static"
    (sources / "css").mkdir(parents=True)
    style = sources / "css" / "site.css"
    style.write_text("body { color: #123; }\n" * 200)
    with override_settings(STATIC_ROOT=root, STATICFILES_DIRS=[sources]):
        assert collect_static_if_changed() is True
        collected = root / "css" / "site.css"
        assert collected.read_text() == style.read_text()
        assert (root / "css" / "site.css.gz").is_file()  # WhiteNoise's compressed copy

        assert collect_static_if_changed() is False  # nothing changed: no copy, no re-compression

        style.write_text("body { color: #456; }\n" * 200)
        os.utime(style, ns=(style.stat().st_atime_ns, style.stat().st_mtime_ns + 1_000_000_000))
        assert collect_static_if_changed() is True
        assert "#456" in collected.read_text()

        collected.unlink()  # removed from the collected tree by hand
        assert collect_static_if_changed() is True
        assert collected.is_file()
        assert collect_static_if_changed() is False
