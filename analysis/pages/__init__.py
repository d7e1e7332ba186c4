"""One module per detail page of a run (<run>/report/<name>.md); analysis/report.py
puts them together."""
