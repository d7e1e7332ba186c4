"""What the runner, the native stage and the analysis share: the variant list, the run
directory, the guest's output formats, the file system's faults and the messages. It
imports neither runner nor analysis, so data flows one way: runner -> run directory ->
analysis, both standing on this package."""
