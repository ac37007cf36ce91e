#!/usr/bin/python3
"""Writes the npucc package's __init__.pyi from __init__.pyi.in, with compile()'s
signature, whose keywords come from the library's option table, in place of @COMPILE@.

    PYTHONPATH=BUILD/python gen_stub.py TEMPLATE OUTPUT
"""

import inspect
import sys

# This file's folder holds the source package, which lacks the built extension: the
# package imported is the one PYTHONPATH names.
sys.path.pop(0)
import npucc  # noqa: E402


def compile_stub():
    signature = inspect.signature(npucc.compile)
    lines = ["def compile("]
    starred = False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and not starred:
            lines.append("    *,")
            starred = True
        annotation = str(parameter.annotation).replace("PathLike", "_Path")
        default = "" if parameter.default is inspect.Parameter.empty else " = None"
        lines.append(f"    {parameter.name}: {annotation}{default},")
    lines.append(f") -> {signature.return_annotation}: ...")
    return "\n".join(lines)


def main():
    template, output = sys.argv[1:]
    with open(template, encoding="utf-8") as file:
        text = file.read()
    if "@COMPILE@" not in text:
        print(f"{template}: no @COMPILE@ line", file=sys.stderr)
        return 1
    with open(output, "w", encoding="utf-8") as file:
        file.write(text.replace("@COMPILE@", compile_stub()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
