"""The one error type of the history tools: a user-facing message (what was given, what is accepted). The command
line prints it on one line and exits 2; nothing else is caught, so a bug still shows its traceback."""


class HistoryError(Exception):
    """A problem with the user's input (arguments, files, database), not with this code."""
