"""The one error type for every checkpoint problem."""


class CheckpointError(ValueError):
    """A checkpoint directory is missing a file or holds something docbeam cannot use."""
