"""Running one job: the driver (job), its waves, one Beam job (execute), Beam options, the run folder."""
