"""Running a child process as another OS user, and checking what that user may reach."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path
from typing import Any


def run_as_kwargs(os_user: pwd.struct_passwd | None, env: dict[str, str]) -> dict[str, Any]:
    """Popen arguments for the child's environment and, as root, for dropping to `os_user`.

    The child execs under the new uid directly (no runuser/su in between): its pid is ours to signal and reap.
    """
    if os_user is None:
        return {"env": {**os.environ, **env}}
    identity = {"HOME": os_user.pw_dir, "USER": os_user.pw_name, "LOGNAME": os_user.pw_name}
    return {
        "env": {**os.environ, **identity, **env},
        "user": os_user.pw_uid,
        "group": os_user.pw_gid,
        "extra_groups": [],
        "cwd": "/",  # the caller's cwd may not be readable by os_user
    }


def traversable_by(path: Path, user: pwd.struct_passwd) -> bool:
    """Whether `user` may search every directory from `/` down to `path`."""
    resolved = path.resolve()
    for directory in (resolved, *resolved.parents):
        mode = directory.stat()
        if mode.st_uid == user.pw_uid:
            bit = stat.S_IXUSR
        elif mode.st_gid == user.pw_gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not mode.st_mode & bit:
            return False
    return True
