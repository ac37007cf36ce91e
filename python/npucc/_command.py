"""The `npucc` command of the wheel: runs the npucc program the package carries.

The wheel holds the program in npucc/bin/ (with ONNX Runtime in npucc/lib/npucc/, which it
finds through its run path), as the cmake and ninja wheels hold theirs; pip's console
entry point calls main(), which replaces this Python process with it, so its exit status,
signals and terminal are the program's own.
"""

import os
import pathlib
import sys


def program() -> pathlib.Path:
    """The path of the npucc program in this package."""
    return pathlib.Path(__file__).resolve().parent / "bin" / "npucc"


def main() -> None:
    path = program()
    if not os.access(path, os.X_OK):
        sys.exit(f"npucc: error: {path} is missing (this npucc package was not installed from "
                 "its wheel: `pip install` the wheel, or run the npucc of your install)")
    os.execv(path, [str(path), *sys.argv[1:]])
