"""tpbench analysis: statistics, plots, codegen checks and the report."""
