#include "runtime/ort_session.h"
#include "runtime/library_location.h"

#include "npucc/error.h"
#include "util/strings.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifdef NPUCC_HAVE_ONNXRUNTIME
#include "util/fd.h"
#include "util/sha256.h"

#include <dlfcn.h>
#include <exception>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <optional>
#include <onnxruntime_c_api.h>
#include <thread>
#endif

namespace npucc::runtime::detail {

namespace {

const char* const k_how_to_get =
    "run scripts/install-onnxruntime and configure again, or point -DONNXRUNTIME_ROOT= at an "
    "ONNX Runtime release folder (npucc-compile(1), ACCURACY)";

} // namespace

#ifndef NPUCC_HAVE_ONNXRUNTIME

struct OrtRunner::State {};

OrtRunner::OrtRunner() {
  throw Error("--check-accuracy needs ONNX Runtime, and this npucc was built without it",
              k_how_to_get);
}
OrtRunner::~OrtRunner() = default;
std::string OrtRunner::version() const { return {}; }
std::vector<TensorSet> OrtRunner::run(std::string_view, const std::string&,
                                      const std::vector<TensorSet>&,
                                      const std::vector<std::string>&) {
  return {};
}
void OrtRunner::run_pair(const Source&, const Source&, const std::vector<TensorSet>&,
                         const std::vector<std::string>&, const EachPair&) {}
std::string library_identity() { return "none"; }
std::filesystem::path library_file() { return {}; }
void remember_library_digest(const util::FileStamp&, const std::string&) {}

#else

namespace {

constexpr uint32_t k_api_version = 29; // the headers' ORT_API_VERSION npucc is written for

// NPUCC_ONNXRUNTIME_LIBRARY, else the one beside npucc (lib/npucc/ of an install, through
// its run path) or the build's (library_location.h).
std::string library_path() { return onnxruntime_library_path(); }

} // namespace

namespace {

// The library's SHA-256 at one stamp: remembered from the digest cache, or read once.
struct LibraryDigest {
  std::mutex mutex;
  std::optional<util::FileStamp> stamp;
  std::string sha256;
};
LibraryDigest& library_digest() {
  static LibraryDigest known;
  return known;
}

// The library's version, as its release folder (LIB/../VERSION_NUMBER: "1.30.0") or else its
// file name (libonnxruntime.so.1.30.0) says; what identifies it is its SHA-256, this is for
// people reading the key.
std::string library_version(const std::filesystem::path& real) {
  std::ifstream file(real.parent_path().parent_path() / "VERSION_NUMBER");
  std::string line;
  if (file && std::getline(file, line) && !line.empty() && line.size() <= 32 &&
      line.find_first_not_of("0123456789.") == std::string::npos) {
    return line;
  }
  const std::string name = real.filename().string();
  const std::string prefix = "libonnxruntime.so.";
  return util::starts_with(name, prefix) && name.size() > prefix.size()
             ? util::printable(name.substr(prefix.size()))
             : "unknown";
}

} // namespace

std::filesystem::path library_file() {
  std::error_code error;
  auto real = std::filesystem::canonical(library_path(), error);
  return error ? std::filesystem::path() : real;
}

void remember_library_digest(const util::FileStamp& stamp, const std::string& sha256) {
  LibraryDigest& known = library_digest();
  std::lock_guard<std::mutex> lock(known.mutex);
  known.stamp = stamp;
  known.sha256 = sha256;
}

// The library's version and the SHA-256 of its bytes: its size alone would let two builds of
// one size share accuracy results (issue 42, item 9).
std::string library_identity() {
  const std::filesystem::path real = library_file();
  if (real.empty()) {
    return "missing " + library_path();
  }
  util::Fd fd(::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  std::optional<util::FileStamp> stamp = fd.get() < 0 ? std::nullopt : util::stamp_of(fd.get());
  if (!stamp) {
    return "unreadable " + real.string();
  }
  const std::string head = "onnxruntime " + library_version(real) + " sha256 ";
  LibraryDigest& known = library_digest();
  std::lock_guard<std::mutex> lock(known.mutex);
  if (known.stamp != stamp) {
    util::Expected<util::FileDigest> digest = util::try_sha256_of_fd(fd.get(), real);
    if (!digest || util::stamp_of(fd.get()) != stamp) {
      return "unreadable " + real.string(); // or changed while it was read: no result shared
    }
    known.stamp = stamp;
    known.sha256 = digest->sha256;
  }
  return head + known.sha256;
}

namespace {

// Owns one OrtXxx object, released with the API's ReleaseXxx.
template <typename T> struct Owned {
  T* pointer = nullptr;
  void (*release)(T*) = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (pointer != nullptr && release != nullptr) {
      release(pointer);
    }
  }
};

} // namespace

struct OrtRunner::State {
  void* library = nullptr;
  const OrtApiBase* base = nullptr;
  const OrtApi* api = nullptr;
  OrtEnv* env = nullptr;
  OrtMemoryInfo* cpu = nullptr;

  // Throws the runtime's message, in one line, when `status` is an error.
  void check(OrtStatus* status, const std::string& doing) const {
    if (status == nullptr) {
      return;
    }
    std::string message = util::first_line(api->GetErrorMessage(status));
    api->ReleaseStatus(status);
    throw Error("ONNX Runtime: " + doing + ": " + message);
  }

  void configure(OrtSessionOptions* options) const;
  OrtValue* input_value(const Tensor& tensor) const;
  // An output where ONNX Runtime wrote it: valid while `value` is.
  TensorView output_view(const std::string& name, OrtValue* value) const;
  void open(Owned<OrtSession>& session, std::string_view model, const std::string& file) const;
  // Runs `session` on `set`; `produced` (one per output name) owns the outputs.
  void run_set(OrtSession* session, const TensorSet& set,
               const std::vector<const char*>& output_names,
               std::vector<Owned<OrtValue>>& produced) const;
};

OrtRunner::OrtRunner() : m_state(std::make_unique<State>()) {
  // ONNX Runtime 1.29 and later, as Microsoft builds it, starts a telemetry client when its
  // environment is created: it writes a device id under ~/.cache/Microsoft, session files
  // in $TMPDIR, and uploads an event. npucc writes nothing it did not make and sends
  // nothing: this turns it off before the library is loaded (this runs in the runtime's own
  // process).
  ::setenv("ORT_DISABLE_TELEMETRY", "1", 1);
  const std::string path = library_path();
  m_state->library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (m_state->library == nullptr) {
    throw Error("cannot load ONNX Runtime (" + path + "): " + util::first_line(::dlerror()),
                k_how_to_get + std::string("; NPUCC_ONNXRUNTIME_LIBRARY names another library"));
  }
  using GetApiBase = const OrtApiBase* (*)();
  auto get_base = reinterpret_cast<GetApiBase>(::dlsym(m_state->library, "OrtGetApiBase"));
  m_state->base = get_base != nullptr ? get_base() : nullptr;
  m_state->api = m_state->base != nullptr ? m_state->base->GetApi(k_api_version) : nullptr;
  if (m_state->api == nullptr) {
    throw Error(path + " is not an ONNX Runtime with C API version " +
                    std::to_string(k_api_version) + " (ONNX Runtime 1.24 or later)",
                k_how_to_get);
  }
  m_state->check(m_state->api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "npucc", &m_state->env),
                 "creating its environment");
  m_state->check(m_state->api->DisableTelemetryEvents(m_state->env), "turning telemetry off");
  m_state->check(
      m_state->api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &m_state->cpu),
      "describing CPU memory");
}

OrtRunner::~OrtRunner() {
  if (m_state->cpu != nullptr) {
    m_state->api->ReleaseMemoryInfo(m_state->cpu);
  }
  if (m_state->env != nullptr) {
    m_state->api->ReleaseEnv(m_state->env);
  }
  // The library stays loaded: the process ends soon after.
}

std::string OrtRunner::version() const {
  return std::string("ONNX Runtime ") + m_state->base->GetVersionString();
}

// Deterministic and faithful to the graph as written:
// - one intra-op and one inter-op thread, sequential execution, deterministic kernels: the
//   same graph on the same inputs gives the same bits on every run (a float sum split over
//   threads does not);
// - basic optimisations only: constant folding (which computes a weight's Cast round trip
//   with the same Cast kernel) and semantics-preserving eliminations. The extended level's
//   fusions (LayerNormFusion, GeLU, attention) would compute across an emulation graph's
//   rounding Casts, and cast-chain elimination, off by default, would drop them: it is set
//   off here so that no default of another ONNX Runtime version turns it on;
// - no spinning threads: two cores are shared with the rest of the machine.
void OrtRunner::State::configure(OrtSessionOptions* options) const {
  check(api->SetIntraOpNumThreads(options, 1), "setting the thread count");
  check(api->SetInterOpNumThreads(options, 1), "setting the thread count");
  check(api->SetSessionExecutionMode(options, ORT_SEQUENTIAL), "setting sequential execution");
  check(api->SetSessionGraphOptimizationLevel(options, ORT_ENABLE_BASIC),
        "setting the optimisation level");
  check(api->SetDeterministicCompute(options, true), "asking for deterministic kernels");
  check(api->AddSessionConfigEntry(options, "optimization.enable_cast_chain_elimination", "0"),
        "keeping cast-chain elimination off");
  check(api->AddSessionConfigEntry(options, "session.intra_op.allow_spinning", "0"),
        "turning thread spinning off");
  check(api->AddSessionConfigEntry(options, "session.inter_op.allow_spinning", "0"),
        "turning thread spinning off");
}

OrtValue* OrtRunner::State::input_value(const Tensor& tensor) const {
  static char k_empty = 0; // an empty tensor still needs a data pointer
  void* data = tensor.bytes.empty() ? &k_empty : const_cast<char*>(tensor.bytes.data());
  OrtValue* value = nullptr;
  check(api->CreateTensorWithDataAsOrtValue(
            cpu, data, tensor.bytes.size(), tensor.shape.data(), tensor.shape.size(),
            static_cast<ONNXTensorElementDataType>(tensor.type), &value),
        "input '" + tensor.name + "'");
  return value;
}

TensorView OrtRunner::State::output_view(const std::string& name, OrtValue* value) const {
  ONNXType kind = ONNX_TYPE_UNKNOWN;
  check(api->GetValueType(value, &kind), "output '" + name + "'");
  if (kind != ONNX_TYPE_TENSOR) {
    throw Error("output '" + name + "' is not a tensor (a sequence, map or optional): "
                "--check-accuracy compares tensors only");
  }
  Owned<OrtTensorTypeAndShapeInfo> info;
  info.release = api->ReleaseTensorTypeAndShapeInfo;
  check(api->GetTensorTypeAndShape(value, &info.pointer), "output '" + name + "'");
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t rank = 0;
  check(api->GetTensorElementType(info.pointer, &type), "output '" + name + "'");
  check(api->GetDimensionsCount(info.pointer, &rank), "output '" + name + "'");
  TensorView tensor;
  tensor.name = name;
  tensor.type = static_cast<int32_t>(type);
  tensor.shape.resize(rank);
  check(api->GetDimensions(info.pointer, tensor.shape.data(), rank), "output '" + name + "'");
  const size_t size = element_size(tensor.type);
  if (size == 0) {
    throw Error("output '" + name + "' is of " + type_name(tensor.type) +
                ": --check-accuracy compares numeric tensors only");
  }
  const auto bytes = static_cast<size_t>(element_count(tensor.shape)) * size;
  void* data = nullptr;
  if (bytes > 0) {
    check(api->GetTensorMutableData(value, &data), "output '" + name + "'");
    tensor.bytes = std::string_view(static_cast<const char*>(data), bytes);
  }
  return tensor;
}

void OrtRunner::State::open(Owned<OrtSession>& session, std::string_view model,
                            const std::string& file) const {
  Owned<OrtSessionOptions> options;
  options.release = api->ReleaseSessionOptions;
  check(api->CreateSessionOptions(&options.pointer), "creating session options");
  configure(options.pointer);
  session.release = api->ReleaseSession;
  check(file.empty() ? api->CreateSessionFromArray(env, model.data(), model.size(),
                                                   options.pointer, &session.pointer)
                     : api->CreateSession(env, file.c_str(), options.pointer, &session.pointer),
        "loading the graph");
}

void OrtRunner::State::run_set(OrtSession* session, const TensorSet& set,
                               const std::vector<const char*>& output_names,
                               std::vector<Owned<OrtValue>>& produced) const {
  std::vector<Owned<OrtValue>> values(set.size());
  std::vector<const char*> input_names;
  std::vector<const OrtValue*> input_values;
  for (size_t i = 0; i < set.size(); ++i) {
    values[i].release = api->ReleaseValue;
    values[i].pointer = input_value(set[i]);
    input_names.push_back(set[i].name.c_str());
    input_values.push_back(values[i].pointer);
  }
  std::vector<OrtValue*> produced_values(output_names.size(), nullptr);
  check(api->Run(session, nullptr, input_names.data(), input_values.data(), input_names.size(),
                 output_names.data(), output_names.size(), produced_values.data()),
        "running the graph");
  for (size_t i = 0; i < output_names.size(); ++i) {
    produced[i].release = api->ReleaseValue;
    produced[i].pointer = produced_values[i];
  }
}

namespace {

std::vector<const char*> c_names(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const auto& name : names) {
    out.push_back(name.c_str());
  }
  return out;
}

// Runs `first` here and `second` on a thread of its own at once; rethrows what either threw
// (first's first).
void run_both(const std::function<void()>& first, const std::function<void()>& second) {
  std::exception_ptr second_error;
  std::thread thread([&] {
    try {
      second();
    } catch (...) {
      second_error = std::current_exception();
    }
  });
  std::exception_ptr first_error;
  try {
    first();
  } catch (...) {
    first_error = std::current_exception();
  }
  thread.join();
  if (first_error || second_error) {
    std::rethrow_exception(first_error ? first_error : second_error);
  }
}

// `work`, its npucc::Error prefixed with the graph's name.
std::function<void()> naming(const std::string& what, std::function<void()> work) {
  return [what, work = std::move(work)] {
    try {
      work();
    } catch (const Error& e) {
      throw Error(what + ": " + e.what(), e.hint());
    }
  };
}

} // namespace

std::vector<TensorSet> OrtRunner::run(std::string_view model, const std::string& file,
                                      const std::vector<TensorSet>& inputs,
                                      const std::vector<std::string>& outputs) {
  const State& ort = *m_state;
  Owned<OrtSession> session;
  ort.open(session, model, file);
  const auto output_names = c_names(outputs);
  std::vector<TensorSet> results;
  for (const auto& set : inputs) {
    std::vector<Owned<OrtValue>> produced(outputs.size());
    ort.run_set(session.pointer, set, output_names, produced);
    TensorSet result;
    for (size_t i = 0; i < outputs.size(); ++i) {
      result.push_back(copy_of(ort.output_view(outputs[i], produced[i].pointer)));
    }
    results.push_back(std::move(result));
  }
  return results;
}

void OrtRunner::run_pair(const Source& a, const Source& b, const std::vector<TensorSet>& inputs,
                         const std::vector<std::string>& outputs, const EachPair& each) {
  const State& ort = *m_state;
  Owned<OrtSession> a_session, b_session;
  run_both(naming(a.what, [&] { ort.open(a_session, a.model, a.file); }),
           naming(b.what, [&] { ort.open(b_session, b.model, b.file); }));
  const auto output_names = c_names(outputs);
  for (const auto& set : inputs) {
    std::vector<Owned<OrtValue>> a_out(outputs.size()), b_out(outputs.size());
    run_both(naming(a.what, [&] { ort.run_set(a_session.pointer, set, output_names, a_out); }),
             naming(b.what, [&] { ort.run_set(b_session.pointer, set, output_names, b_out); }));
    std::vector<TensorView> a_views, b_views;
    for (size_t i = 0; i < outputs.size(); ++i) {
      a_views.push_back(ort.output_view(outputs[i], a_out[i].pointer));
      b_views.push_back(ort.output_view(outputs[i], b_out[i].pointer));
    }
    each(a_views, b_views);
  }
}

#endif

} // namespace npucc::runtime::detail
