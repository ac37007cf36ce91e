# Sourced by the e2e tests that run ONNX Runtime as their oracle (tests/oracle): sets
# `oracle`, and fails naming the fix when onnxruntime-node is not installed (a test whose
# oracle is missing must not pass).
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
oracle="$SOURCE_DIR/tests/oracle"
if [ ! -d "$oracle/node_modules/onnxruntime-node" ]; then
  echo "FAIL: ONNX Runtime is not installed: run scripts/install-test-deps (npm install in tests/oracle)"
  exit 1
fi
