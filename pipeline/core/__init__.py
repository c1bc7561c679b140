"""The bottom of the pipeline: the records that flow through a job, every flag, the output
tables and the hardware catalogue. Imports neither Beam nor JAX, so the command line can
check a request before either loads."""
