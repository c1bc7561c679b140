"""Storage: single objects on local disk or gs:// with one retry policy (storage), model
checkpoints on a worker (checkpoints), a finished run's tables read back (outputs)."""
