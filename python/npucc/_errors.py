"""npucc.Error, npucc.UsageError and npucc.NpuccWarning, and raising them from Python code."""

from __future__ import annotations

from . import _npucc

Error = _npucc.Error
UsageError = _npucc.UsageError


class NpuccWarning(UserWarning):
    """Something worth knowing that did not stop the operation.

    The lines `npucc` prints as "npucc: warning: ..." (an Ascend option npucc ignores, a
    cache store that failed on a full disk while the compile itself succeeded, a remote
    cache that could not be reached) are issued with warnings.warn() in this category.
    """


def usage_error(message: str, hint: str = "") -> UsageError:
    """A UsageError raised by the Python layer, with the attributes the C++ ones carry."""
    error = UsageError(f"{message} ({hint})" if hint else message)
    error.message = message
    error.hint = hint
    error.exit_status = 2
    return error
