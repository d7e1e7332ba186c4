"""The pipeline: runner's and analysis' steps chained into one command (tpbench/__main__.py)."""
