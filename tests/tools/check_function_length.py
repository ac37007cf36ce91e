#!/usr/bin/python3
"""Fails when a function in src/ or cli/ is longer than 100 lines (house style: short
functions). Data tables are the one exception, by name in ALLOWED.

    check_function_length.py SOURCE_DIR [--limit N] [--list]

A function's length runs from the line of its name to the line of its closing brace.
The scan is lexical (comments, strings and preprocessor lines blanked, braces matched):
at namespace or class scope, a brace that follows a parameter list (with qualifiers, a
trailing return type or a constructor's initialisers) opens a function body, and the
function ends where that brace closes. Lambdas and local classes count towards the
function that holds them.
"""

import argparse
import os
import re
import sys

LIMIT = 100

# (path, function): functions that are data tables, one entry a line.
ALLOWED = {
    ("src/config/option_table.cpp", "option_table"),
}

SCOPE_KEYWORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b|\bextern\s*$")
FUNCTION_HEAD = re.compile(
    r"\)\s*(?:const\b|noexcept\b(?:\s*\([^()]*\))?|override\b|final\b|mutable\b|&&?|\s)*"
    r"(?:->[^;{}]*)?$"
)
# `Type::Type(args) : m_a(a), m_b{}` (inner brace groups are collapsed to "{}").
CONSTRUCTOR_HEAD = re.compile(r"\)\s*(?:noexcept\s*)?:(?!:)[^;]*[)}]\s*$")
LAMBDA_HEAD = re.compile(r"\]\s*(?:mutable\s*)?$")


def blank(text):
    """The text with comments, string and character literals and preprocessor lines
    replaced by spaces (newlines kept, so line numbers stay)."""
    out = []
    i = 0
    n = len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = re.match(r'(?:u8|[uUL])?R"([^(\s]*)\(', text[i:i + 40])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = text.find(")" + raw.group(1) + '"', i + raw.end())
            end = n if close < 0 else close + len(raw.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isdigit())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def function_name(head):
    """The name before the parameter list (the first '(' outside template brackets) and
    where it starts in `head`."""
    paren = 0
    angle = 0
    for i, c in enumerate(head):
        if c == "(":
            if paren == 0 and angle == 0:
                name = re.search(r"(~?[A-Za-z_][\w:~]*)\s*$", head[:i])
                if not name:
                    operator = re.search(r"(\boperator\b.*?)\s*$", head[:i])
                    return (operator.group(1), operator.start(1)) if operator else ("(lambda)", 0)
                if name.group(1).endswith("operator"):
                    return name.group(1) + "()", name.start(1)
                return name.group(1), name.start(1)
            paren += 1
        elif c == ")":
            paren = max(0, paren - 1)
        elif c == "<" and paren == 0:
            angle += 1
        elif c == ">" and paren == 0 and angle > 0:
            angle -= 1
    return "(lambda)", 0


def is_function_head(head):
    return bool(FUNCTION_HEAD.search(head) or CONSTRUCTOR_HEAD.search(head) or
                LAMBDA_HEAD.search(head))


def functions(text):
    """(name, first line, last line) of every outermost function body in `text`."""
    code = blank(text)
    found = []
    # Each open brace: "scope" (namespace, class: scanned inside), "init" (a brace
    # initialiser: part of the head around it), "function", or "block" inside one.
    stack = []
    head = []  # (character, line) since the last ';', scope brace or function end
    line = 1
    start = None
    for c in code:
        if c == "\n":
            line += 1
        if stack and stack[-1][0] in ("function", "block"):
            if c == "{":
                stack.append(("block", line))
            elif c == "}" and stack.pop()[0] == "function":
                found.append(start + (line,))
                head = []
            continue
        if stack and stack[-1][0] == "init":
            if c == "{":
                stack.append(("init", line))
            elif c == "}":
                stack.pop()
                if not stack or stack[-1][0] != "init":
                    head.extend([("{", line), ("}", line)])
            continue
        if c == "{":
            text_head = "".join(ch for ch, _ in head)
            if is_function_head(text_head.strip()):
                name, at = function_name(text_head)
                start = (name, head[at][1] if head else line)
                stack.append(("function", line))
            elif SCOPE_KEYWORDS.search(text_head) and "=" not in text_head:
                stack.append(("scope", line))
                head = []
            else:
                stack.append(("init", line))
            continue
        if c in "};":
            if c == "}" and stack:
                stack.pop()
            head = []
            continue
        if head or not c.isspace():
            head.append((c, line))
    return found


def self_test():
    """The scanner on code whose functions are known; a list of what it got wrong."""
    body = "  x += 1;\n" * 99
    sample = (
        "namespace a {\n"                                     # 1
        "const int k_table[] = {1, 2, {3}};\n"                 # 2: data, not a function
        "struct S {\n"                                         # 3
        "  S(int v) : m_w(v), m_v{v} {}\n"                     # 4: constructor, 1 line
        "  int get() const noexcept { return m_v; }\n"         # 5: 1 line
        "  int m_v, m_w;\n"
        "};\n"
        "auto long_one(int x) -> int {\n"                      # 8: 101 lines
        + body +
        "  return x; }\n"                                      # 108
        "void strings() {\n"                                   # 109
        "  const char* s = R\"({ not a brace)\"; char c = '{'; int n = 20'000;\n"
        "  // }\n"
        "  auto f = [&](int y) { return y; };\n"
        "}\n"                                                  # 113
        "} // namespace a\n"
    )
    expected = [("S", 4, 4), ("get", 5, 5), ("long_one", 8, 108), ("strings", 109, 113)]
    got = functions(sample)
    return [] if got == expected else [f"self-test: expected {expected}, got {got}"]


def source_files(root):
    for folder in ("src", "cli"):
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith((".cpp", ".h")):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dir")
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("--list", action="store_true", help="print every function's length")
    args = parser.parse_args()
    wrong = self_test()
    if wrong:
        print("\n".join(wrong))
        return 2
    too_long = []
    seen_allowed = set()
    for path in sorted(source_files(args.source_dir)):
        with open(os.path.join(args.source_dir, path), encoding="utf-8") as f:
            text = f.read()
        for name, first, last in functions(text):
            length = last - first + 1
            if args.list:
                print(f"{length:5d} {path}:{first} {name}")
            short = name.split("::")[-1]
            if (path, short) in ALLOWED:
                seen_allowed.add((path, short))
                continue
            if length > args.limit:
                too_long.append(f"{path}:{first}: {name} is {length} lines (over {args.limit})")
    stale = sorted(ALLOWED - seen_allowed)
    for path, name in stale:
        too_long.append(f"{path}: {name} is in the allow-list but not found (remove it)")
    for problem in too_long:
        print(problem)
    if too_long:
        print(f"{len(too_long)} problem(s): split the function (house style: short functions); "
              f"only data tables may be allow-listed in {os.path.basename(__file__)}")
        return 1
    print(f"no function over {args.limit} lines in src/ and cli/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
