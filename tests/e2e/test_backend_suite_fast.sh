#!/usr/bin/env bash
# ONNX's backend test suite with --accelerate-train-mode 'fast|step': every low graph passes the
# full checker, and ONNX Runtime loads and runs it wherever it runs the original.
export NPUCC_BACKEND_MODE='fast|step'
exec bash "$(dirname "$0")/test_backend_suite.sh"
