#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <sys/types.h>

// Ctrl-C, SIGTERM and SIGHUP in the commands that run long (compile, cache populate). The
// first signal stops and reaps every child process npucc started (a second later, whatever
// is left is killed), removes this process's and those children's staging folders and
// private temporary folders, prints "npucc: interrupted: N of M compiled" and exits 130
// (SIGINT), 143 (SIGTERM) or 129 (SIGHUP). Further signals meanwhile wait for that cleanup,
// which is bounded (the children's second): a signal sent to the whole process group, as
// `timeout -s INT` and a CI runner's cancel do, reaches npucc twice (once to it, once to its
// group), and neither may cut the cleanup short. SIGKILL and SIGQUIT remain for a user who
// will not wait. The children that serve npucc (the runtime, the ONNX checker) run in their
// own process group (become_quiet_child): a signal to npucc's group reaches npucc, which
// ends them, and not them.
//
// The work is done in the handler itself, with async-signal-safe calls only (kill,
// waitpid, getdents64, unlinkat, write, _exit): a forked populate worker must stay
// single-threaded, so there is no signal thread. What it needs is registered beforehand.
namespace npucc::util {

// Installs the handlers for SIGINT, SIGTERM and SIGHUP. A forked child that installs them
// again (a populate worker) cleans up the same way but says nothing: its parent does.
void install_interrupt_handlers();

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

// In a forked child: the parent's children are not its own (its folders are shared), the
// parent's deferral (DeferInterrupts around the fork) is not the child's, and the
// "interrupted" line is the parent's to print.
void forget_children_after_fork();

// In a child npucc forks to serve it (the runtime, the ONNX checker), right after fork():
// SIGINT and SIGHUP ignored, SIGTERM's default action (the parent's handler stops it with
// SIGTERM), and a process group of its own, so that a signal to npucc's group (Ctrl-C,
// `timeout`, a CI cancel, a terminal's hangup) never ends it in the middle of a request:
// npucc alone decides when it ends, and reports an interrupt, not the child's death. Writes
// to the terminal proceed from there (SIGTTOU ignored).
void become_quiet_child();

// Where a child's death may be the interrupt handler's doing (it stops every child before
// it cleans up): when a signal has arrived, never returns (the handler, in this thread or
// another, ends the process with its line), so the death is not also reported as an error.
// Not to be called inside a DeferInterrupts of this thread.
void await_pending_interrupt();

// At the end of a command, before its exit: when a signal is being acted on in another
// thread, waits for it (the process then ends as interrupted, with its line); otherwise a
// signal from here on is no longer acted on, and the command's own status stands.
void settle_interrupts_before_exit();

// While one is alive, in any thread, a signal waits: the handler notes it and returns, and
// the last DeferInterrupts to end acts on it (stop, sweep, exit) in its own thread. For the
// few steps that must not be cut in two: publishing an output folder (so an interrupt leaves
// the earlier compile or the new one, never a mix), a fork and the watch_child() after it
// (so no child is forked that the handler does not know about), making a private temporary
// folder (so none is made after the sweep). Keep them short: the signal waits for them.
// One that begins while a signal is being acted on never returns (the process is ending),
// and the handler waits (at most a second) for those already begun in other threads.
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
