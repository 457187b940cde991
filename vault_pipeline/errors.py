"""Error types a user can act on. The CLI prints them as one line, without a traceback."""


class VaultError(Exception):
    """A mistake or a condition the user can fix (bad path, bad query, missing table)."""


class RawFormatError(VaultError):
    """A raw file that is not one of the formats the vault understands, or is malformed."""
