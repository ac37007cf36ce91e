#include "schemas/type_names.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

// ONNX 1.12 keeps its type names in a singleton that its headers do not declare
// (onnx/defs/data_type_utils.cc); libonnx exports it. This is its interface as built in
// Debian 12's libonnx 1.12.0 (three containers handed out by reference), and the only
// way to extend the names without patching the library.
namespace onnx::Utils {
class TypesWrapper final {
public:
  static TypesWrapper& GetTypesWrapper();
  std::unordered_set<std::string>& GetAllowedDataTypes();
  std::unordered_map<std::string, int32_t>& TypeStrToTensorDataType();
  std::unordered_map<int32_t, std::string>& TensorDataTypeToTypeStr();
  ~TypesWrapper() = default;
  TypesWrapper(const TypesWrapper&) = delete;
  TypesWrapper& operator=(const TypesWrapper&) = delete;

private:
  TypesWrapper();
};
} // namespace onnx::Utils

namespace npucc::schemas {

namespace {

struct NewType {
  const char* name; // as ONNX's type strings spell it
  int32_t id;       // TensorProto.DataType (onnx.proto of ONNX 1.23)
};

constexpr NewType k_new_types[] = {
    {"float8e4m3fn", 17}, {"float8e4m3fnuz", 18}, {"float8e5m2", 19}, {"float8e5m2fnuz", 20},
    {"uint4", 21},        {"int4", 22},           {"float4e2m1", 23}, {"float8e8m0", 24},
    {"uint2", 25},        {"int2", 26},
};

} // namespace

void register_type_names() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& types = onnx::Utils::TypesWrapper::GetTypesWrapper();
    for (const auto& type : k_new_types) {
      types.GetAllowedDataTypes().insert(type.name);
      types.TypeStrToTensorDataType()[type.name] = type.id;
      types.TensorDataTypeToTypeStr()[type.id] = type.name;
    }
  });
}

} // namespace npucc::schemas
