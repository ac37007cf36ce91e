#!/usr/bin/env bash
# ONNX's backend test suite with --accelerate-train-mode 'fast1|step': every low graph passes the
# full checker.
export NPUCC_BACKEND_MODE='fast1|step'
exec bash "$(dirname "$0")/test_backend_suite.sh"
