#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <sys/types.h>

// Ctrl-C and SIGTERM in the commands that run long (compile, cache populate). The first
// signal stops and reaps every child process npucc started (a second later, whatever is
// left is killed), removes this process's and those children's staging folders, prints
// "npucc: interrupted: N of M compiled" and exits 130 (SIGINT) or 143 (SIGTERM). A second
// signal meanwhile takes the default action: npucc dies at once.
//
// The work is done in the handler itself, with async-signal-safe calls only (kill,
// waitpid, getdents64, unlinkat, write, _exit): a forked populate worker must stay
// single-threaded, so there is no signal thread. What it needs is registered beforehand.
namespace npucc::util {

// kills: the second signal takes the default action (the command a user runs);
// waits: further signals wait for the cleanup (a populate worker: its parent's SIGTERM
// after the terminal's SIGINT must not cut short the reaping of its own ONNX worker).
enum class SecondSignal { kills, waits };
void install_interrupt_handlers(SecondSignal second = SecondSignal::kills);

// A child to stop (SIGTERM, then SIGKILL after a second) and reap on an interrupt.
void watch_child(pid_t pid);
void forget_child(pid_t pid);

// A folder where this process and its children stage work under names that start with
// `prefix` and hold ".PID." (cache/file_ops.h unique_name, util/file_io.h
// temporary_sibling): such names are removed on an interrupt (one level deep, as staging
// folders hold files only).
void sweep_on_interrupt(const std::filesystem::path& dir, const std::string& prefix = {});

// What "interrupted: N of M compiled" says.
void set_interrupt_progress(size_t done, size_t total);
// One more compiled (an output folder published while a signal waited for it).
void count_interrupt_progress();

// In a forked child: the parent's children are not its own (its folders are shared), and
// the parent's deferral (DeferInterrupts around the fork) is not the child's.
void forget_children_after_fork();

// While one is alive, in any thread, a signal waits: the handler notes it and returns, and
// the last DeferInterrupts to end acts on it (stop, sweep, exit) in its own thread. For the
// few steps that must not be cut in two: publishing an output folder (so an interrupt leaves
// the earlier compile or the new one, never a mix), a fork and the watch_child() after it
// (so no child is forked that the handler does not know about). Keep them short: the
// signal waits for them.
class DeferInterrupts {
public:
  DeferInterrupts();
  ~DeferInterrupts();
  DeferInterrupts(const DeferInterrupts&) = delete;
  DeferInterrupts& operator=(const DeferInterrupts&) = delete;
};

// Whether a signal arrived and waits for a DeferInterrupts to end (util/test_point.h).
bool interrupt_pending();

} // namespace npucc::util
