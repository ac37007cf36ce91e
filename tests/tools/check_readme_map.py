#!/usr/bin/python3
"""Fails when the README's map ("Where things are") leaves out a folder of src/ or a
public header of include/npucc/: a new one needs its line there.

    check_readme_map.py SOURCE_DIR
"""

import os
import sys


def main():
    root = sys.argv[1]
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.find("## Where things are")
    if start < 0:
        print("README.md: no section \"## Where things are\"")
        return 1
    end = readme.find("\n## ", start + 1)
    section = readme[start:end if end > 0 else len(readme)]
    missing = []
    src = os.path.join(root, "src")
    for name in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, name)) and f"| `src/{name}/` |" not in section:
            missing.append(f"the folder src/{name}/ (a row \"| `src/{name}/` | ... |\")")
    include = os.path.join(root, "include", "npucc")
    for name in sorted(os.listdir(include)):
        header = name[:-len(".in")] if name.endswith(".h.in") else name
        if header.endswith(".h") and f"| `{header}` |" not in section:
            missing.append(f"the public header {header} (a row \"| `{header}` | ... |\")")
    for item in missing:
        print(f"README.md, \"Where things are\": add {item}")
    if missing:
        return 1
    print("README.md's map lists every src/ folder and public header")
    return 0


if __name__ == "__main__":
    sys.exit(main())
