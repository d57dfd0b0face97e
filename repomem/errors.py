"""User-facing errors: each message says what is wrong and which path or setting to fix."""


class RepomemError(Exception):
    """Base of every error repomem reports to a user instead of a traceback."""
