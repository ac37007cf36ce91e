#!/usr/bin/python3
"""A check for checks: flags the test patterns that let a test pass whatever the product
does (issue 47), unless the line carries a written reason.

    check_test_honesty.py SOURCE_DIR          scans tests/e2e and tests/unit
    check_test_honesty.py --file PATH...      scans the named files (kind from the suffix)
    check_test_honesty.py --self-test         plants each pattern and checks it is flagged

Flagged in the e2e scripts (tests/e2e/*.sh):
  - `|| true` and `|| return 0`: a failure turned into success;
  - `exit 0`, and a skip message not followed by `exit 77` (the one skip code CTest is
    told of): a skip that reads as a pass;
  - a timing assertion: a comparison of a value measured from the clock.
Flagged in the unit tests (tests/unit/*.cpp, *.h):
  - `catch (...)`, and a catch block that returns without a value: an error swallowed and
    the test case ended as passed;
  - a timing assertion: CHECK/REQUIRE over a clock reading (no timings in unit tests).

A line is allowed when it, or a comment line directly above it, carries the marker
`honest: REASON` (`# honest: ...` in shell, `// honest: ...` in C++) with a reason of at
least three words: why the pattern cannot hide a product failure there.
"""

import argparse
import os
import re
import sys
import tempfile

MARKER = re.compile(r"(?:#|//)\s*honest:\s*(\S+\s+\S+\s+\S+.*)$")
MARKER_LINE = re.compile(r"^\s*(?:#|//)\s*honest:\s*\S+\s+\S+\s+\S+")

SHELL_RULES = [
    (re.compile(r"\|\|\s*true\b"), "`|| true` turns a failure into success"),
    (re.compile(r"\|\|\s*return\s+0\b"), "`|| return 0` ends the check as passed"),
    (re.compile(r"(?:^|[;&|{(]\s*|\bthen\s+|\belse\s+)exit\s+0\b"),
     "`exit 0` reads as a pass (a skip exits 77)"),
]
SKIP_MESSAGE = re.compile(r"\b(?:echo|printf)\s+[\"']?(?:skip|SKIP|Skip)\b")
SHELL_CLOCK = re.compile(r"\b(?:now_ms|cpu_ms)\b|\$SECONDS\b|\$\(\(\s*SECONDS|\bdate\s+\+%s|\btime\s")
SHELL_ASSIGN = re.compile(r"(?:^|[;\s(])(?:local\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)")
SHELL_COMPARE = re.compile(r"(?:\[\[?|\(\()[^]]*-(?:lt|le|gt|ge)\b|\(\([^)]*[<>]")

CPP_CATCH_ALL = re.compile(r"\bcatch\s*\(\s*\.\.\.\s*\)")
CPP_CATCH = re.compile(r"\bcatch\s*\([^)]*\)\s*\{")
CPP_CLOCK = re.compile(r"\b(?:steady_clock|system_clock|high_resolution_clock)\s*::\s*now\b|\bclock_gettime\b|\bgettimeofday\b")
CPP_ASSERT = re.compile(r"\b(?:CHECK|REQUIRE|WARN)(?:_[A-Z_]+)?\s*\(")
CPP_ASSIGN = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:=|\{|\()(?!=)(.*)")


def allowed(lines, index):
    """Whether line `index` (0-based) carries a reason, or the comment line above does."""
    if MARKER.search(lines[index]):
        return True
    above = index - 1
    while above >= 0 and MARKER_LINE.match(lines[above]) is None and \
            re.match(r"^\s*(?:#|//)", lines[above]) and "honest:" not in lines[above]:
        above -= 1  # a reason may span several comment lines; its first carries the marker
    return above >= 0 and MARKER_LINE.match(lines[above]) is not None and above >= index - 4


def shell_code(line, keep_strings=True):
    """The line without its comment (a `#` that starts a word, outside quotes), and
    without the text of its quoted strings unless keep_strings."""
    quote, out = None, []
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
            elif not keep_strings and ch != "$":
                ch = " "
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;"):
            break
        out.append(ch)
    return "".join(out)


def tainted_names(codes, clock, assign):
    """Names assigned (transitively) from a clock reading."""
    names = set()
    changed = True
    while changed:
        changed = False
        for code in codes:
            for match in assign.finditer(code):
                name, value = match.group(1), match.group(2)
                if name in names:
                    continue
                if clock.search(value) or any(re.search(r"\b%s\b" % re.escape(n), value) for n in names):
                    names.add(name)
                    changed = True
    return names


def uses(code, names):
    return any(re.search(r"(?<![A-Za-z0-9_])\$?\{?%s\b" % re.escape(n), code) for n in names)


def check_shell(path, text):
    lines = text.split("\n")
    codes = [shell_code(line) for line in lines]
    timed = tainted_names(codes, SHELL_CLOCK, SHELL_ASSIGN)
    findings = []
    for i, code in enumerate(codes):
        bare = shell_code(lines[i], keep_strings=False)
        reasons = [why for rule, why in SHELL_RULES if rule.search(bare)]
        if SKIP_MESSAGE.search(code):
            following = " ".join(codes[i:i + 3])
            if not re.search(r"\bexit\s+77\b", following):
                reasons.append("a skip message without `exit 77` (the suite reads as passed)")
        if SHELL_COMPARE.search(code) and uses(code, timed):
            reasons.append("a timing assertion (a comparison of a clock reading)")
        findings += [(path, i + 1, why, lines[i].strip()) for why in reasons if not allowed(lines, i)]
    return findings


def cpp_code(text):
    """The text with comments and string literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i)); i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end])); i = end
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delimiter = text[i + 2:text.find("(", i)]
            end = text.find(")" + delimiter + '"', i)
            end = n if end < 0 else end + len(delimiter) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end])); i = end
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('"' + " " * (j - i - 1) + '"'); i = j + 1
        else:
            out.append(text[i]); i += 1
    return "".join(out)


def block_end(code, open_brace):
    depth = 0
    for j in range(open_brace, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code)


def check_cpp(path, text):
    lines = text.split("\n")
    code = cpp_code(text)
    code_lines = code.split("\n")
    line_of = lambda offset: code.count("\n", 0, offset)
    flagged = {}
    for match in CPP_CATCH_ALL.finditer(code):
        flagged.setdefault(line_of(match.start()), []).append("`catch (...)` swallows every error")
    for match in CPP_CATCH.finditer(code):
        body = code[match.end() - 1:block_end(code, match.end() - 1) + 1]
        if re.search(r"\breturn\s*;", body):
            flagged.setdefault(line_of(match.start()), []).append(
                "a catch that returns: the error ends the test case as passed")
    timed = tainted_names(code_lines, CPP_CLOCK, CPP_ASSIGN)
    for i, line in enumerate(code_lines):
        if CPP_ASSERT.search(line) and (CPP_CLOCK.search(line) or uses(line, timed)):
            flagged.setdefault(i, []).append("a timing assertion in a unit test")
    return [(path, i + 1, why, lines[i].strip()) for i in sorted(flagged) for why in flagged[i]
            if not allowed(lines, i)]


def check_file(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if path.endswith(".sh"):
        return check_shell(path, text)
    if path.endswith((".cpp", ".h", ".hpp")):
        return check_cpp(path, text)
    return []


def scan(root):
    findings = []
    for folder in ("tests/e2e", "tests/unit"):
        base = os.path.join(root, folder)
        for name in sorted(os.listdir(base)):
            findings += check_file(os.path.join(base, name))
    return findings


# Each planted pattern must be flagged, and its twin with a reason must not.
PLANTS = [
    ("e2e.sh", 'cmp a b || true\n'),
    ("e2e.sh", 'f() {\n  [ -n "$x" ] || return 0\n}\n'),
    ("e2e.sh", 'if [ "$(id -u)" != 0 ]; then\n  echo "skip: needs root"\n  exit 0\nfi\n'),
    ("e2e.sh", 'echo "SKIP: no data"\n'),
    ("e2e.sh", 'start=$(now_ms)\nrun\nelapsed=$(($(now_ms) - start))\n[ "$elapsed" -lt 100 ] || fail slow\n'),
    ("unit.cpp", 'TEST_CASE("x") {\n  try {\n    f();\n  } catch (const Error&) {\n    return;\n  }\n}\n'),
    ("unit.cpp", 'TEST_CASE("x") {\n  try { f(); } catch (...) {}\n}\n'),
    ("unit.cpp", 'TEST_CASE("x") {\n  auto t0 = std::chrono::steady_clock::now();\n  f();\n'
                 '  auto took = std::chrono::steady_clock::now() - t0;\n  CHECK(took < 1s);\n}\n'),
]
CLEAN = [
    ("e2e.sh", 'cmp a b || fail "differ"\n[ -d x ] || skip_suite "no x"\necho "skip: y"\nexit 77\n'),
    ("e2e.sh", 'rm -f "$pid_file" || true # honest: cleanup of a scratch file, no check here\n'),
    ("unit.cpp", 'std::string message() {\n  try { f(); } catch (const Error& e) {\n    return e.what();\n  }\n'
                 '  return {};\n}\n'),
]


def self_test():
    bad = 0
    with tempfile.TemporaryDirectory() as scratch:
        for number, (name, text) in enumerate(PLANTS + CLEAN):
            path = os.path.join(scratch, "%d-%s" % (number, name))
            with open(path, "w") as f:
                f.write(text)
            found = check_file(path)
            planted = number < len(PLANTS)
            if planted and not found:
                print("self-test: not flagged: %r" % text)
                bad += 1
            elif not planted and found:
                print("self-test: flagged a clean case: %s" % found)
                bad += 1
            if planted:
                reasoned = re.sub(r"\n", "  %s honest: planted for the self-test\n" %
                                  ("#" if name.endswith(".sh") else "//"), text)
                with open(path, "w") as f:
                    f.write(reasoned)
                if check_file(path):
                    print("self-test: a line with a reason still flagged: %r" % reasoned)
                    bad += 1
    print("self-test: %d planted patterns, %d clean cases, %d wrong" % (len(PLANTS), len(CLEAN), bad))
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?")
    parser.add_argument("--file", nargs="+", default=[])
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if not args.root and not args.file:
        parser.error("give SOURCE_DIR, --file PATH... or --self-test")
    findings = scan(args.root) if args.root else []
    for path in args.file:
        findings += check_file(path)
    for path, line, why, text in findings:
        print("%s:%d: %s (add a reason: `# honest: WHY` / `// honest: WHY`)\n    %s" % (path, line, why, text))
    if findings:
        print("%d line(s) flagged: mend the check so it can fail, or say on the line why it cannot hide a failure" % len(findings))
        return 1
    print("no unreasoned pattern in tests/e2e or tests/unit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
