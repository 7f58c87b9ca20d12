"""posenc's benchmark and accuracy history: every run kept in SQLite, compared with statistics, change points found.

Needs numpy and scipy (Debian python3-numpy, python3-scipy); the report generator (posenc_report, standard library
only) imports this package only when given --history. See README.md in this directory."""
