/* The floor under `npucc compile --check-accuracy` (tests/bench/run, case accuracy): what
 * ONNX Runtime alone spends creating a session for each of two graphs and running the same
 * input sets through each, driven through the same library and C API as npucc.
 *
 *   ort_floor LIBRARY THREADS GRAPH_A GRAPH_B SET...
 *
 * SET is one input set: NAME:D0,D1,...:FILE[;NAME:...:FILE], each FILE the raw little-endian
 * float32 values of that input (int64 with NAME written i64@NAME). THREADS is the intra-op thread count: 1 with the settings
 * of npucc's runtime process (sequential, deterministic kernels, no spinning), 0 for ONNX
 * Runtime's defaults. Prints "floor_seconds S": the wall
 * time from loading the library to the last run's end. Reading the input files is not
 * counted (npucc's figure includes reading its samples). */
#include <dlfcn.h>
#include <onnxruntime_c_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { k_max_inputs = 16, k_max_rank = 8, k_max_outputs = 64 };

typedef struct {
  char name[256];
  ONNXTensorElementDataType type;
  int64_t shape[k_max_rank];
  size_t rank;
  void* data;
  size_t bytes;
} Input;

typedef struct {
  Input inputs[k_max_inputs];
  size_t count;
} InputSet;

static const OrtApi* g_api;

static void check(OrtStatus* status, const char* doing) {
  if (status != NULL) {
    fprintf(stderr, "ort_floor: %s: %s\n", doing, g_api->GetErrorMessage(status));
    exit(1);
  }
}

static void fail(const char* what, const char* detail) {
  fprintf(stderr, "ort_floor: %s: %s\n", what, detail);
  exit(2);
}

static void read_values(Input* input, const char* path) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) {
    fail("cannot open", path);
  }
  fseek(file, 0, SEEK_END);
  input->bytes = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  input->data = malloc(input->bytes + 1);
  if (fread(input->data, 1, input->bytes, file) != input->bytes) {
    fail("cannot read", path);
  }
  fclose(file);
}

/* NAME:D0,D1,...:FILE, NAME prefixed "i64@" for an int64 input */
static void parse_input(Input* input, char* text) {
  char* name = strtok(text, ":");
  input->type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  if (name != NULL && strncmp(name, "i64@", 4) == 0) {
    input->type = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    name += 4;
  }
  char* dims = strtok(NULL, ":");
  char* path = strtok(NULL, "");
  if (name == NULL || dims == NULL || path == NULL) {
    fail("an input is NAME:D0,D1,...:FILE", text);
  }
  snprintf(input->name, sizeof input->name, "%s", name);
  input->rank = 0;
  for (char* dim = strtok(dims, ","); dim != NULL && input->rank < k_max_rank;
       dim = strtok(NULL, ",")) {
    input->shape[input->rank++] = atoll(dim);
  }
  read_values(input, path);
}

static void parse_set(InputSet* set, char* text) {
  char* parts[k_max_inputs];
  set->count = 0;
  for (char* part = strtok(text, ";"); part != NULL && set->count < k_max_inputs;
       part = strtok(NULL, ";")) {
    parts[set->count++] = part;
  }
  for (size_t i = 0; i < set->count; ++i) {
    parse_input(&set->inputs[i], parts[i]);
  }
}

static double now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec / 1e9;
}

static OrtSession* open_session(OrtEnv* env, const char* path, int threads) {
  OrtSessionOptions* options = NULL;
  check(g_api->CreateSessionOptions(&options), "session options");
  if (threads > 0) {
    check(g_api->SetIntraOpNumThreads(options, threads), "threads");
    check(g_api->SetInterOpNumThreads(options, 1), "threads");
    check(g_api->SetSessionExecutionMode(options, ORT_SEQUENTIAL), "sequential");
    check(g_api->SetDeterministicCompute(options, 1), "deterministic");
    check(g_api->AddSessionConfigEntry(options, "session.intra_op.allow_spinning", "0"), "spinning");
  }
  check(g_api->SetSessionGraphOptimizationLevel(options, ORT_ENABLE_BASIC), "optimisation level");
  OrtSession* session = NULL;
  check(g_api->CreateSession(env, path, options, &session), path);
  g_api->ReleaseSessionOptions(options);
  return session;
}

static void run_set(OrtSession* session, OrtMemoryInfo* cpu, const InputSet* set) {
  OrtAllocator* allocator = NULL;
  check(g_api->GetAllocatorWithDefaultOptions(&allocator), "allocator");
  size_t output_count = 0;
  check(g_api->SessionGetOutputCount(session, &output_count), "outputs");
  char* output_names[k_max_outputs];
  for (size_t i = 0; i < output_count && i < k_max_outputs; ++i) {
    check(g_api->SessionGetOutputName(session, i, allocator, &output_names[i]), "output name");
  }
  const char* input_names[k_max_inputs];
  OrtValue* values[k_max_inputs];
  for (size_t i = 0; i < set->count; ++i) {
    const Input* input = &set->inputs[i];
    input_names[i] = input->name;
    check(g_api->CreateTensorWithDataAsOrtValue(cpu, input->data, input->bytes, input->shape,
                                                input->rank, input->type, &values[i]),
          input->name);
  }
  OrtValue* outputs[k_max_outputs] = {NULL};
  check(g_api->Run(session, NULL, input_names, (const OrtValue* const*)values, set->count,
                   (const char* const*)output_names, output_count, outputs),
        "run");
  for (size_t i = 0; i < output_count; ++i) {
    g_api->ReleaseValue(outputs[i]);
    allocator->Free(allocator, output_names[i]);
  }
  for (size_t i = 0; i < set->count; ++i) {
    g_api->ReleaseValue(values[i]);
  }
}

static const OrtApi* load_api(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fail("cannot load", dlerror());
  }
  typedef const OrtApiBase* (*GetApiBase)(void);
  GetApiBase get_base = (GetApiBase)dlsym(handle, "OrtGetApiBase");
  const OrtApi* api = get_base != NULL ? get_base()->GetApi(ORT_API_VERSION) : NULL;
  if (api == NULL) {
    fail("not an ONNX Runtime of this C API version", library);
  }
  return api;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    fail("usage", "ort_floor LIBRARY THREADS GRAPH_A GRAPH_B SET...");
  }
  const int threads = atoi(argv[2]);
  const size_t set_count = (size_t)(argc - 5);
  InputSet* sets = calloc(set_count, sizeof *sets);
  for (size_t i = 0; i < set_count; ++i) {
    parse_set(&sets[i], argv[5 + i]);
  }
  const double start = now_seconds();
  g_api = load_api(argv[1]);
  OrtEnv* env = NULL;
  check(g_api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "ort_floor", &env), "environment");
  OrtMemoryInfo* cpu = NULL;
  check(g_api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu), "memory info");
  for (int graph = 3; graph <= 4; ++graph) {
    OrtSession* session = open_session(env, argv[graph], threads);
    for (size_t i = 0; i < set_count; ++i) {
      run_set(session, cpu, &sets[i]);
    }
    g_api->ReleaseSession(session);
  }
  printf("floor_seconds %.6f\n", now_seconds() - start);
  return 0;
}
