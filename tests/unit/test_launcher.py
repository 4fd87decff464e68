"""The launcher's restart policy: exponential, capped, and reset once a process stayed up."""

from __future__ import annotations

from backend.launcher import RESTART_MAX_DELAY_S, STABLE_AFTER_S, Backoff


def test_restart_delays_double_up_to_the_cap_and_reset_after_a_stable_run() -> None:
    backoff = Backoff()
    crashes = [backoff.next_delay(ran_for=0.5) for _ in range(9)]
    assert crashes == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert max(crashes) == RESTART_MAX_DELAY_S
    assert backoff.next_delay(ran_for=STABLE_AFTER_S) == 1  # it had been healthy: start over
