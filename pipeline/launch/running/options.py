"""docbeam's flags as Beam pipeline options (the definitions live in core.flags)."""

import argparse

from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.core.flags import add_job_flags


class DocbeamOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser: argparse.ArgumentParser) -> None:
        add_job_flags(parser)
