#include "util/input_file.h"

#include "util/disk.h"
#include "util/eintr.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>

namespace npucc::util {

namespace {

// Each open input stays open while the compile maps it, and a model may keep its weights in
// thousands of external files: past the soft limit on descriptors (often 1024), the limit
// is raised to the hard one, as programs that hold many files open are expected to.
bool raise_descriptor_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) {
    return false;
  }
  limit.rlim_cur = limit.rlim_max;
  return ::setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

int open_input(const std::filesystem::path& path, InputFile::Links links) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  if (links == InputFile::Links::refuse) {
    flags |= O_NOFOLLOW;
  }
  int fd = disk().open(path, flags, 0);
  if (fd < 0 && errno == EMFILE && raise_descriptor_limit()) {
    fd = disk().open(path, flags, 0);
  }
  return fd;
}

Error open_error(const std::filesystem::path& path, int error, InputFile::Links links) {
  if (error == ENOENT) {
    return Error(path.string() + ": no such file", "check the path");
  }
  if (error == ELOOP && links == InputFile::Links::refuse) {
    return Error(path.string() + ": is a symbolic link now; it was not when resolved",
                 "something is changing the model's folder: compile again once it is done");
  }
  return Error(path.string() + ": cannot open: " + std::strerror(error));
}

} // namespace

Expected<std::shared_ptr<InputFile>> InputFile::open(const std::filesystem::path& path,
                                                     Links links) {
  Fd fd(open_input(path, links));
  if (fd.get() < 0) {
    return open_error(path, errno, links);
  }
  std::optional<FileStamp> stamp = stamp_of(fd.get());
  if (!stamp) {
    return Error(path.string() + ": not a regular file; expected an .onnx model or its data");
  }
  // Regular files ignore O_NONBLOCK; cleared anyway so no reader meets EAGAIN.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return std::shared_ptr<InputFile>(new InputFile(path, std::move(fd), *stamp));
}

ssize_t InputFile::read_at(char* buffer, size_t size, uint64_t offset) const {
  return retry_on_eintr(
      [&] { return ::pread(m_fd.get(), buffer, size, static_cast<off_t>(offset)); });
}

Expected<std::shared_ptr<InputFile>> InputFiles::try_open(const std::filesystem::path& path,
                                                          InputFile::Links links) {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto found = m_files.find(path);
  if (found != m_files.end()) {
    return found->second;
  }
  Expected<std::shared_ptr<InputFile>> opened = InputFile::open(path, links);
  if (!opened) {
    return opened;
  }
  std::shared_ptr<InputFile> file = std::move(opened).value();
  m_files.emplace(path, file);
  return file;
}

std::shared_ptr<InputFile> InputFiles::find(const std::filesystem::path& path) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto found = m_files.find(path);
  return found == m_files.end() ? nullptr : found->second;
}

} // namespace npucc::util
