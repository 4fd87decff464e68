"""The launcher's restart policy: exponential, capped, and reset once a process stayed up."""

from __future__ import annotations

from pathlib import Path

from backend.launcher import REPO, RESTART_MAX_DELAY_S, STABLE_AFTER_S, Backoff, _manage_hint


def test_restart_delays_double_up_to_the_cap_and_reset_after_a_stable_run() -> None:
    backoff = Backoff()
    crashes = [backoff.next_delay(ran_for=0.5) for _ in range(9)]
    assert crashes == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert max(crashes) == RESTART_MAX_DELAY_S
    assert backoff.next_delay(ran_for=STABLE_AFTER_S) == 1  # it had been healthy: start over


def test_the_password_reset_hint_is_the_readme_command_for_the_default_data_dir(tmp_path: Path) -> None:
    assert _manage_hint((REPO / "var").resolve()) + " changepassword admin" == "./openguru manage changepassword admin"
    assert "`./openguru manage changepassword admin`" in (REPO / "README.md").read_text()
    spaced = tmp_path / "my data"
    assert _manage_hint(spaced) == f"OPENGURU_DATA_DIR='{spaced}' ./openguru manage"
