#!/usr/bin/python3
"""Runs ONNX's full checker and strict, type-checking shape inference on many models in one
process (importing onnx is the slow part) and prints one line per failing model.

usage: onnx_checker.py [--list FILE] [--quiet] MODEL...
  --list FILE   read more model paths from FILE, one a line ("-" reads standard input)
  --quiet       print only failures and the closing count

Output: "FAIL <path>: <stage>: <first line of the error>" per failure, then
"checker: N ok, M failed". Exit status 0 when every model passes, 1 otherwise, 2 on bad usage.
Run with /usr/bin/python3 (Debian's python3-onnx).
"""

import os
import sys

import onnx
import onnx.checker
import onnx.shape_inference

k_protobuf_limit = 2**31 - 1


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def check(path):
    """Returns None when the model passes, else "stage: reason"."""
    try:
        if os.path.getsize(path) >= k_protobuf_limit:
            # Past 2 GiB the checker must read from the path; infer_shapes_path writes its result
            # to a file, so point it at a throw-away one rather than over the model.
            onnx.checker.check_model(path)
            scratch = path + ".checker-inferred.onnx"
            try:
                onnx.shape_inference.infer_shapes_path(path, scratch, check_type=True,
                                                       strict_mode=True)
            finally:
                if os.path.exists(scratch):
                    os.remove(scratch)
            return None
        model = onnx.load(path)  # loads external data next to the model too
    except Exception as error:  # noqa: BLE001 - any failure is a report line
        return "load: " + first_line(error)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as error:  # noqa: BLE001
        return "check_model(full_check=True): " + first_line(error)
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as error:  # noqa: BLE001
        return "infer_shapes(check_type, strict_mode): " + first_line(error)
    return None


def main(argv):
    paths = []
    quiet = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--list":
            if i + 1 >= len(argv):
                print("onnx_checker.py: --list needs a file", file=sys.stderr)
                return 2
            stream = sys.stdin if argv[i + 1] == "-" else open(argv[i + 1], encoding="utf-8")
            paths.extend(line.strip() for line in stream if line.strip())
            i += 2
            continue
        if arg == "--quiet":
            quiet = True
        elif arg in ("-h", "--help"):
            print(__doc__)
            return 0
        elif arg.startswith("-"):
            print(f"onnx_checker.py: unknown option {arg}", file=sys.stderr)
            return 2
        else:
            paths.append(arg)
        i += 1
    if not paths:
        print("onnx_checker.py: no models given", file=sys.stderr)
        return 2
    failed = 0
    for path in paths:
        problem = check(path)
        if problem is None:
            if not quiet:
                print(f"OK {path}")
        else:
            failed += 1
            print(f"FAIL {path}: {problem}")
        sys.stdout.flush()
    print(f"checker: {len(paths) - failed} ok, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
