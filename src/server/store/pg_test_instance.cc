#include "server/store/pg_test_instance.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "common/file_util.h"
#include "common/run_command.h"
#include "server/store/pg_backend.h"

namespace rota::store::testing {
namespace {

bool IsExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// The directory of initdb and pg_ctl: $ROTA_PG_BINDIR, else the newest
// /usr/lib/postgresql/N/bin (Debian), else the directory of initdb on the PATH.
Result<std::string> BinDir() {
  if (const char* env = std::getenv("ROTA_PG_BINDIR"); env && *env) {
    if (IsExecutable(std::string(env) + "/initdb")) return std::string(env);
    return Status::Unavailable(std::string("ROTA_PG_BINDIR=") + env + " has no initdb");
  }
  std::error_code ec;
  int best = -1;
  std::string best_dir;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = e.path().filename().string();
    const int v = std::atoi(name.c_str());
    const std::string bin = e.path().string() + "/bin";
    if (v > best && IsExecutable(bin + "/initdb") && IsExecutable(bin + "/pg_ctl")) {
      best = v;
      best_dir = bin;
    }
  }
  if (best >= 0) return best_dir;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string d;
    while (std::getline(ss, d, ':')) {
      if (!d.empty() && IsExecutable(d + "/initdb") && IsExecutable(d + "/pg_ctl")) return d;
    }
  }
  return Status::Unavailable(
      "PostgreSQL server programs not found (/usr/lib/postgresql/*/bin; Debian: apt-get install "
      "postgresql, or scripts/install-deps.sh --test)");
}

// Runs a server program: as `postgres` when we are root (initdb and the server
// refuse to run as root), else as ourselves.
Result<CommandOutput> RunPg(std::vector<std::string> argv, int timeout_ms = 60'000) {
  if (::geteuid() == 0) argv.insert(argv.begin(), {"runuser", "-u", "postgres", "--"});
  RunOptions o;
  o.timeout_ms = timeout_ms;
  return RunCommand(argv, o);
}

Status CheckRun(const Result<CommandOutput>& r, const std::string& what) {
  if (!r.ok()) return r.status().WithContext(what);
  if (r->exit_code != 0) {
    return Status::Unavailable(what + " failed (exit " + std::to_string(r->exit_code) + "): " +
                               r->err.substr(0, 2000) + r->out.substr(0, 500));
  }
  return Status::Ok();
}

// A loopback port nobody listens on now (the kernel's choice for port 0).
Result<int> FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return Status::IoError(std::string("bind: ") + std::strerror(errno));
  }
  ::close(fd);
  return static_cast<int>(ntohs(a.sin_port));
}

Result<std::map<std::string, std::string>> ReadState(const std::string& file) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(file));
  std::map<std::string, std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PgTestServer>> PgTestServer::Start() {
  ASSIGN_OR_RETURN(std::string bin, BinDir());
  uid_t uid = ::geteuid();
  gid_t gid = ::getegid();
  if (uid == 0) {
    const passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) return Status::Unavailable("running as root and there is no postgres user");
    uid = pw->pw_uid;
    gid = pw->pw_gid;
  }
  std::string tmpl = "/tmp/rota_pg_XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Status::IoError(std::string("mkdtemp: ") + std::strerror(errno));
  }
  std::unique_ptr<PgTestServer> s(new PgTestServer(tmpl, 0, true));
  if (::chown(s->dir_.c_str(), uid, gid) != 0) {
    return Status::IoError("chown " + s->dir_ + ": " + std::strerror(errno));
  }
  const std::string data = s->dir_ + "/data";
  RETURN_IF_ERROR(CheckRun(RunPg({bin + "/initdb", "-D", data, "-A", "trust", "-U", "rota", "-E",
                                  "UTF8", "--locale=C", "-N"}),
                           "initdb"));
  Status started = Status::Ok();
  for (int attempt = 0; attempt < 3; ++attempt) {  // the free port may be taken meanwhile
    ASSIGN_OR_RETURN(int port, FreePort());
    const std::string opts = "-p " + std::to_string(port) + " -k " + s->dir_ +
                             " -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
                             " -c synchronous_commit=off -c max_connections=200";
    started = CheckRun(RunPg({bin + "/pg_ctl", "-D", data, "-l", s->dir_ + "/log", "-o", opts, "-w",
                              "-t", "60", "start"}),
                       "pg_ctl start");
    if (started.ok()) {
      s->port_ = port;
      return s;
    }
  }
  auto log = ReadFile(s->dir_ + "/log");
  return started.WithContext(log.ok() ? "server log: " + log->substr(0, 2000) : "no server log");
}

Result<std::unique_ptr<PgTestServer>> PgTestServer::FromState(const std::string& state_file,
                                                              bool owned) {
  ASSIGN_OR_RETURN(auto state, ReadState(state_file));
  if (state.count("unavailable")) return Status::Unavailable(state["unavailable"]);
  if (!state.count("dir") || !state.count("port")) {
    return Status::Unavailable(state_file + " does not describe a PostgreSQL server");
  }
  return std::unique_ptr<PgTestServer>(
      new PgTestServer(state["dir"], std::atoi(state["port"].c_str()), owned));
}

PgTestServer::~PgTestServer() {
  if (!owned_ || dir_.empty()) return;
  if (port_ != 0) {
    auto bin = BinDir();
    if (bin.ok()) (void)RunPg({*bin + "/pg_ctl", "-D", dir_ + "/data", "-m", "immediate", "-w",
                               "-t", "60", "stop"});
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status PgTestServer::WriteState(const std::string& state_file) const {
  return WriteFileAtomic(state_file,
                         "dir=" + dir_ + "\nport=" + std::to_string(port_) + "\n");
}

Status WriteUnavailableState(const std::string& state_file, const std::string& why) {
  std::string line = why;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  return WriteFileAtomic(state_file, "unavailable=" + line + "\n");
}

std::string PgTestServer::Url(const std::string& database) const {
  return "postgresql://rota@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

Result<std::string> PgTestServer::CreateDatabase() {
  ASSIGN_OR_RETURN(std::string suffix, RandomHex(8));
  const std::string name = "t_" + suffix;
  ASSIGN_OR_RETURN(Db db, OpenPostgres(Url("postgres"), Url("postgres")));
  RETURN_IF_ERROR(db.Exec("CREATE DATABASE " + name));
  return name;
}

Status PgTestServer::DropDatabase(const std::string& name) {
  ASSIGN_OR_RETURN(Db db, OpenPostgres(Url("postgres"), Url("postgres")));
  return db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
}

Result<PgTestServer*> SharedPgServer() {
  static std::mutex mu;
  static std::unique_ptr<PgTestServer> server;
  static Status failed = Status::Ok();
  std::lock_guard<std::mutex> lock(mu);
  if (server) return server.get();
  if (!failed.ok()) return failed;
  Result<std::unique_ptr<PgTestServer>> s = Status::Unavailable("");
  const char* state = std::getenv("ROTA_TEST_PG_STATE");
  if (state && *state && ::access(state, F_OK) == 0) {
    s = PgTestServer::FromState(state, /*owned=*/false);
  } else {
    s = PgTestServer::Start();
  }
  if (!s.ok()) {
    failed = s.status();
    return failed;
  }
  server = std::move(*s);
  return server.get();
}

bool PostgresRequired() {
  const char* v = std::getenv("ROTA_REQUIRE_POSTGRES");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace rota::store::testing
