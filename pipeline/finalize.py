"""`python -m docbeam.pipeline.finalize --output gs://BUCKET/out --job-id JOB_ID`: finish a Dataflow
run whose launcher did not wait for its job (the Airflow DAG's last task). The work is
launch.commands.dataflow_finish's."""

import sys

from docbeam.pipeline.launch.commands.dataflow_finish import main

if __name__ == "__main__":
    sys.exit(main())
