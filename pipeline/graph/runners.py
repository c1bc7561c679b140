"""Which Beam runner a job gets.

`DirectRunner` in Beam 2.77 is a switching runner: it first tries Prism, which downloads a
Go binary from GitHub at run time, and falls back to the in-process FnApiRunner when that
fails. A batch tool must not change engines depending on network access, so docbeam maps
DirectRunner to the FnApiRunner directly, configured exactly as DirectRunner configures it
(pipeline options in the provision info; --direct_running_mode / --direct_num_workers
honoured). Any other runner name is passed to Beam unchanged.
"""

from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions


def resolve(options: PipelineOptions):
    name = options.view_as(StandardOptions).runner or "DirectRunner"
    if name not in ("DirectRunner", "direct"):
        return name
    from apache_beam.portability.api import beam_provision_api_pb2
    from apache_beam.runners.portability.fn_api_runner import fn_runner
    from apache_beam.runners.portability.portable_runner import JobServiceHandle

    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    info = fn_runner.ExtendedProvisionInfo(beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded))
    return fn_runner.FnApiRunner(provision_info=info)


def is_local(options: PipelineOptions) -> bool:
    return (options.view_as(StandardOptions).runner or "DirectRunner") in ("DirectRunner", "direct")
