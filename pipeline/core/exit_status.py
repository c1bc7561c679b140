"""The exit statuses of `docbeam run`, `python -m docbeam.pipeline.run` and
`python -m docbeam.pipeline.finalize`, defined once (the --help text is made from these)."""

import enum


class ExitStatus(enum.IntEnum):
    OK = 0
    ACCOUNTING = 1
    USAGE = 2
    REJECTED = 3
    INTERRUPTED = 130

    @property
    def meaning(self) -> str:
        return _MEANING[self]


_MEANING = {
    ExitStatus.OK: "done",
    ExitStatus.ACCOUNTING: "the accounting check failed",
    ExitStatus.USAGE: "usage error, nothing ran",
    ExitStatus.REJECTED: "more rejections than --max-rejected, or over --budget-usd (what ran was written)",
    ExitStatus.INTERRUPTED: "interrupted",
}


def described() -> str:
    """'0 done, 1 ..., 130 interrupted' for help texts."""
    return ", ".join(f"{s.value} {s.meaning}" for s in ExitStatus)
