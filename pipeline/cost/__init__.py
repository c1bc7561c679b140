"""Cost: per-stage metrics (metering), memory drift (memwatch), prices (pricing) and the
cost report (report)."""
