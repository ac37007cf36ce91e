"""Protobuf wire format by field number, for the fields IR versions 9 to 13 added that
ONNX 1.12's generated classes do not have (onnx.proto of ONNX 1.23 gives the numbers).

Writing: message.MergeFromString(field(N, bytes)) appends field N to a 1.12 message, which
keeps it as an unknown field. Reading: unknown(message, N) lists field N's payloads through
google.protobuf's own parser (Message.UnknownFields()).
"""
from google.protobuf.internal import encoder

LEN = 2
VARINT = 0


def field(number, payload):
    """Field `number`: bytes or a message as length-delimited, an int as a varint."""
    if isinstance(payload, int):
        return encoder.TagBytes(number, VARINT) + encoder._VarintBytes(payload)
    if not isinstance(payload, (bytes, bytearray)):
        payload = payload.SerializeToString()
    return encoder.TagBytes(number, LEN) + encoder._VarintBytes(len(payload)) + bytes(payload)


def message(*fields):
    return b"".join(fields)


def append(msg, number, payload):
    msg.MergeFromString(field(number, payload))


def unknown(msg, number):
    """Payloads of field `number` kept as unknown in `msg` (bytes, or ints for varints)."""
    return [f.data for f in msg.UnknownFields() if f.field_number == number]


def unknown_numbers(msg):
    return sorted({f.field_number for f in msg.UnknownFields()})


# Field numbers (onnx.proto, ONNX 1.23) of what IR 9..13 added.
MODEL_CONFIGURATION = 26          # DeviceConfigurationProto: name 1, num_devices 2, device 3
GRAPH_METADATA = 16
NODE_OVERLOAD = 8
NODE_METADATA = 9
NODE_DEVICE_CONFIGURATIONS = 10   # configuration_id 1, sharding_spec 2, pipeline_stage 3
FUNCTION_ATTRIBUTE_PROTO = 11
FUNCTION_VALUE_INFO = 12
FUNCTION_OVERLOAD = 13
FUNCTION_METADATA = 14
VALUE_INFO_METADATA = 4
TENSOR_METADATA = 16


def entry(key, value):
    """A StringStringEntryProto."""
    return message(field(1, key.encode()), field(2, value.encode()))
