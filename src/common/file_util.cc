#include "common/file_util.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rota {
namespace {
Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}
}  // namespace

Result<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("file " + path + " does not exist");
    return Errno("cannot open " + path);
  }
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = Errno("cannot read " + path);
      ::close(fd);
      return st;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return Status::InvalidArgument(path + " is larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return out;
}

Status WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Errno("cannot create " + tmp);
  ::fchmod(fd, mode);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = Errno("cannot write " + tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return st;
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Errno("cannot flush " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = Errno("cannot rename " + tmp + " to " + path);
    ::unlink(tmp.c_str());
    return st;
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& path, mode_t mode) {
  if (path.empty()) return Status::InvalidArgument("empty directory path");
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) {
      return Errno("cannot create directory " + cur);
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IoError(path + " is not a directory");
  }
  return Status::Ok();
}

Result<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t off = 0;
  while (off < bytes) {
    ssize_t n = ::getrandom(raw.data() + off, bytes - off, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("getrandom");
    }
    off += static_cast<size_t>(n);
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace rota
