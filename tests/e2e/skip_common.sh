# Sourced by the e2e suites that cannot run every check on every machine (root, a tmpfs,
# other users, test data, zsh). A suite that ran less than it names exits 77, the one skip
# code: tests/CMakeLists.txt tells CTest (SKIP_RETURN_CODE), so its summary says "Skipped",
# never "Passed", and .ci/run fails when a suite CI must run was skipped. A failure still
# exits 1 first: a skip never hides one.

# skip_suite WHY: nothing of the suite can run here.
skip_suite() {
  echo "skip: $*"
  exit 77
}

# skip_part WHY: this part cannot run here; the rest runs, and suite_end then exits 77.
SKIPPED_PARTS=()
skip_part() {
  echo "skip: $*" # honest: the suite still ends in 77 (suite_end)
  SKIPPED_PARTS+=("$*")
}

# suite_end [FAILURES]: the suite's exit: 1 when a check failed, 77 when a part was
# skipped, else 0.
suite_end() {
  if [ "${1:-0}" != 0 ]; then
    exit 1
  fi
  if [ "${#SKIPPED_PARTS[@]}" != 0 ]; then
    echo "skipped ${#SKIPPED_PARTS[@]} part(s); every other check passed"
    exit 77
  fi
  exit 0
}
