#include "app.h"
#include "check/isolated_worker.h"
#include "util/interrupt.h"

#include <cstdio>
#include <iostream>
#include <unistd.h>

// npucc ends with _exit() once its output is flushed, instead of returning from main.
// Returning runs the destructors of the libraries' statics, ONNX's schema registry above
// all (thousands of small objects): 25-45 ms at the end of every run that compiled,
// longer after a fork, where each free() first copies a page shared with the child.
// The kernel frees that memory at once. Every file npucc writes is closed before run()
// returns, and the ONNX worker process is ended and reaped (_exit() does not wait for
// children; on a machine whose PID 1 does not reap, each would stay a zombie). Builds that
// report at exit (sanitizers, coverage) return normally.
int main(int argc, char** argv) {
  int status = npucc::cli::run(argc, argv);
  // A signal being acted on in another thread ends the process as interrupted, with its
  // line; the status of a command that failed because of it (its child stopped) is not.
  npucc::util::settle_interrupts_before_exit();
  npucc::check::stop_isolated_worker();
  std::cout.flush();
  bool written = std::fflush(stdout) == 0 && !std::ferror(stdout) && !std::cout.fail();
  if (!written && status == 0) {
    std::cerr << "npucc: error: cannot write to standard output (check the disk or pipe it "
                 "goes to)\n";
    status = 1;
  }
  std::cerr.flush();
#ifdef NPUCC_EXIT_NORMALLY
  return status;
#else
  std::fflush(nullptr);
  ::_exit(status);
#endif
}
