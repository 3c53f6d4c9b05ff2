#include "agent/task_secrets.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/log.h"

namespace rota::agent {
namespace {

Status Errno(const std::string& what) { return Status::IoError(what + ": " + std::strerror(errno)); }

// Writes `value` to a new file `path`, 0400, owned by uid:gid.
Status WriteSecretFile(const std::string& path, const std::string& value, std::optional<uint32_t> uid,
                       std::optional<uint32_t> gid) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
  if (fd < 0) return Errno("cannot create " + path);
  size_t done = 0;
  while (done < value.size()) {
    ssize_t n = ::write(fd, value.data() + done, value.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status st = Errno("cannot write " + path);
      ::close(fd);
      return st;
    }
    done += static_cast<size_t>(n);
  }
  if (uid && ::fchown(fd, *uid, gid.value_or(static_cast<gid_t>(-1))) != 0) {
    Status st = Errno("cannot give " + path + " to uid " + std::to_string(*uid));
    ::close(fd);
    return st;
  }
  if (::fchmod(fd, 0400) != 0 || ::close(fd) != 0) return Errno("cannot finish " + path);
  return Status::Ok();
}

}  // namespace

std::string TaskSecretsDir(const std::string& root, const std::string& key, const std::string& id) {
  return root + "/" + key + "." + id;
}

Result<std::string> WriteTaskSecrets(const std::string& root, const std::string& key, const std::string& id,
                                     const std::vector<api::TaskSecret>& secrets, std::optional<uint32_t> uid,
                                     std::optional<uint32_t> gid) {
  if (::mkdir(root.c_str(), 0711) != 0 && errno != EEXIST) return Errno("cannot create " + root);
  struct stat rst {};
  if (::lstat(root.c_str(), &rst) != 0 || !S_ISDIR(rst.st_mode) || rst.st_uid != ::geteuid()) {
    return Status::IoError(root + " must be a directory of the agent's user");
  }
  ::chmod(root.c_str(), 0711);
  struct statfs fs {};
  if (::statfs(root.c_str(), &fs) != 0) return Errno("cannot stat the file system of " + root);
  if (static_cast<unsigned long>(fs.f_type) != TMPFS_MAGIC) {
    return Status::Unavailable(root + " is not on a tmpfs: this node does not take secrets (they are never "
                               "written to disk)");
  }
  const std::string dir = TaskSecretsDir(root, key, id);
  RemoveTaskSecrets(dir);  // a leftover of an earlier start of the same id
  if (::mkdir(dir.c_str(), 0700) != 0) return Errno("cannot create " + dir);
  Status st = Status::Ok();
  if (uid && ::chown(dir.c_str(), *uid, gid.value_or(static_cast<gid_t>(-1))) != 0) {
    st = Errno("cannot give " + dir + " to uid " + std::to_string(*uid));
  }
  for (size_t i = 0; st.ok() && i < secrets.size(); ++i) {
    st = WriteSecretFile(dir + "/" + secrets[i].name, secrets[i].value, uid, gid);
  }
  if (!st.ok()) {
    RemoveTaskSecrets(dir);
    return st;
  }
  return dir;
}

void RemoveTaskSecrets(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) ROTA_LOG(WARNING) << "cannot remove the secrets of a task, " << dir << ": " << ec.message();
}

void SweepTaskSecrets(const std::string& root, const std::string& key, const std::set<std::string>& keep) {
  DIR* d = ::opendir(root.c_str());
  if (d == nullptr) return;
  const std::string prefix = key + ".";
  std::vector<std::string> gone;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    if (!keep.count(name.substr(prefix.size()))) gone.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : gone) RemoveTaskSecrets(root + "/" + name);
}

}  // namespace rota::agent
