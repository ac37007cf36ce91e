#!/usr/bin/python3
"""Writes a libFuzzer dictionary for the model reader: every ONNX op name and
attribute name, bare and as a length-prefixed protobuf string field (op_type is
NodeProto field 4, an attribute's name AttributeProto field 1), plus domains.

    make_dict.py OUT.dict
"""
import sys

import onnx.defs


def escape(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else "\\x%02x" % b for b in data)


def field(number: int, text: str) -> bytes:
    raw = text.encode()
    return bytes([number << 3 | 2, len(raw)]) + raw if len(raw) < 128 else raw


def main() -> None:
    ops, attributes = set(), set()
    for schema in onnx.defs.get_all_schemas_with_history():
        ops.add(schema.name)
        attributes.update(schema.attributes.keys())
    tokens = set()
    for op in ops:
        tokens.add(op.encode())
        tokens.add(field(4, op))
    for name in attributes:
        tokens.add(name.encode())
        tokens.add(field(1, name))
    for domain in ("ai.onnx", "ai.onnx.ml", "ai.onnx.training", "com.microsoft"):
        tokens.add(domain.encode())
    with open(sys.argv[1], "w") as out:
        for index, token in enumerate(sorted(tokens)):
            out.write('t%d="%s"\n' % (index, escape(token)))


main()
