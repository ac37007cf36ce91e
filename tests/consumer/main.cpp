// Uses the installed npucc library: prints the compiler version and the kind of a
// model; returns non-zero on failure.
#include <npucc/error.h>
#include <npucc/model.h>
#include <npucc/version.h>

#include <iostream>

int main(int argc, char** argv) {
  std::cout << "npucc " << npucc::k_version << "\n";
  if (argc < 2) {
    return 0;
  }
  try {
    npucc::Model model = npucc::read_model(argv[1]);
    std::cout << model.proto.graph().node_size() << " nodes\n";
  } catch (const npucc::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
