"""The run folder's format: the one place that writes and reads a run's files."""
