// SshNodes' host-key pinning (ssh_nodes.h): reading a node's keys with
// ssh-keyscan on the scan pool, choosing the one to pin, the per-node known_hosts
// file ssh checks against, and declaring a node or queueing its re-pin with it
// (PinScanned, which changes a running worker, is in ssh_nodes.cc).

#include <stdlib.h>

#include "common/file_util.h"
#include "common/log.h"
#include "common/run_command.h"
#include "common/strings.h"
#include "server/nodes/ssh_nodes.h"
#include "server/store/ssh_nodes.h"

namespace rota::server {

using store::Db;

std::string SshNodes::KnownHostsFile(const std::string& name) const {
  return options_.data_dir + "/ssh/known_hosts.d/" + name;
}

Status SshNodes::WriteKnownHosts(const SshNodeSpec& spec) const {
  std::string content;
  if (spec.host_key.empty()) {
    // Unpinned: the keys learnt at first contact, when ssh still learnt them (none: refused).
    if (auto learnt = ReadFile(client_.known_hosts_file); learnt.ok()) content = *learnt;
  } else {
    ASSIGN_OR_RETURN(ssh::SshTarget target, ssh::ParseSshUrl(spec.url));
    auto key = ssh::ParseHostKey(spec.host_key);
    if (!key.ok()) return key.status().WithContext("pinned host key");
    content = ssh::KnownHostsLine(target, *key) + "\n";
  }
  return WriteFileAtomic(KnownHostsFile(spec.name), content, 0600)
      .WithContext("known hosts file of ssh node " + spec.name);
}

Result<ssh::HostKey> SshNodes::ReadHostKey(const ssh::SshTarget& target,
                                           const ssh::HostKeyPin* pin) const {
  auto out = RunCommand(ssh::KeyscanArgv(target, options_.connect_timeout_s),
                        RunOptions{"", options_.command_timeout_ms, 1 << 16});
  if (!out.ok()) {
    return Status::Unavailable("cannot read the host keys of " + target.Address() +
                               " (is OpenSSH's ssh-keyscan installed?): " + out.status().message());
  }
  std::vector<ssh::HostKey> seen = ssh::ParseKeyscan(out->out);
  if (seen.empty()) {
    std::string why = FirstLine(out->err, 300);
    return Status::Unavailable(target.Address() +
                               " presented no host key (not reachable, or no SSH "
                               "server there" +
                               (why.empty() ? "" : ": " + why) + ")");
  }
  return ssh::ChooseHostKey(seen, pin, target.Address());
}

std::string SshNodes::HostKeyProblem(const std::string& name, const ssh::SshTarget& target,
                                     const std::string& pinned) const {
  const std::string fix =
      "; if its key was changed on purpose, check the new one and pin it: "
      "rota ssh-node pin " +
      name + " [--host-key KEY]";
  auto key = ssh::ParseHostKey(pinned);
  if (!key.ok()) {
    auto seen = ReadHostKey(target, nullptr);
    return "ssh " + target.Url() + ": the host key is not the one learnt at the node's first " +
           "contact, or none was (the node was declared before rota pinned host keys)" +
           (seen.ok() ? "; it presents " + seen->Describe() : "") + fix;
  }
  const ssh::HostKeyPin pin{*key, key->Fingerprint()};
  auto seen = ReadHostKey(target, &pin);
  if (seen.ok()) {
    return "ssh " + target.Url() + ": host key verification failed, though the node presents " +
           "the pinned " + pin.Describe() + " now";
  }
  if (seen.status().code() == StatusCode::kConflict) {
    return "ssh " + target.Url() + ": " + seen.status().message() + "; nothing is run there" + fix;
  }
  return "ssh " + target.Url() + ": host key verification failed (expected the pinned " +
         pin.Describe() + "; " + seen.status().message() + ")";
}

void SshNodes::Add(SshNodeRequest request, Done done) {
  if (public_key_.empty()) {
    return done(
        Status::Unavailable("the server has no SSH key (OpenSSH's ssh-keygen was not found "
                            "at start); agentless nodes cannot be used"));
  }
  api::Json j = ToJson(request.spec);
  for (const char* set_here :
       {"created_ms", "host_key", "host_key_fingerprint", "host_key_source", "host_key_ms"}) {
    j.erase(set_here);
  }
  auto checked = SshNodeRequestFromJson(j);  // one set of rules for API and callers
  if (!checked.ok()) return done(checked.status());
  SshNodeSpec spec = std::move(checked->spec);
  auto known = cluster_->Node(spec.name);
  if (Has(spec.name) || (known && known->info->node_id.rfind("ssh:", 0) != 0)) {
    return done(Status::Conflict("a node named '" + spec.name + "' already exists"));
  }
  Status queued = pool_->Submit([this, spec, pin = std::move(request.pin), done]() mutable {
    done(AddScanned(std::move(spec), pin));
  });
  if (!queued.ok()) done(queued);
}

Result<SshNodeSpec> SshNodes::WithHostKey(SshNodeSpec spec,
                                          const std::optional<ssh::HostKeyPin>& pin) const {
  ASSIGN_OR_RETURN(ssh::SshTarget target, ssh::ParseSshUrl(spec.url));
  auto key = ReadHostKey(target, pin ? &*pin : nullptr);
  if (!key.ok() && key.status().code() == StatusCode::kUnavailable && pin && pin->key) {
    ROTA_LOG(WARNING) << "ssh node " << spec.name
                      << ": the host key given is pinned unchecked: " << key.status().message();
    key = *pin->key;
  }
  if (!key.ok()) return key.status();
  spec.host_key = key->Line();
  spec.host_key_source = !pin ? "scanned" : pin->key ? "given" : "fingerprint";
  spec.host_key_ms = clock_->NowMs();
  return spec;
}

Result<SshNodeSpec> SshNodes::AddScanned(SshNodeSpec spec,
                                         const std::optional<ssh::HostKeyPin>& pin) {
  const std::string name = spec.name;
  auto pinned = WithHostKey(std::move(spec), pin);
  if (!pinned.ok()) return pinned.status().WithContext("ssh node " + name + " not added");
  spec = std::move(*pinned);
  spec.created_ms = spec.host_key_ms;
  auto known = cluster_->Node(spec.name);
  if (Has(spec.name) || (known && known->info->node_id.rfind("ssh:", 0) != 0)) {
    return Status::Conflict("a node named '" + spec.name + "' already exists");
  }
  RETURN_IF_ERROR(WriteKnownHosts(spec));
  const store::SshNodeRow row{spec.name,
                              spec.url,
                              spec.gpus,
                              spec.gpu_model,
                              api::Json(spec.labels).dump(),
                              spec.created_ms,
                              spec.host_key,
                              spec.host_key_source,
                              spec.host_key_ms};
  if (Status st = store_->Write([&](Db& db) { return store::InsertSshNode(db, row); }); !st.ok()) {
    ::unlink(KnownHostsFile(spec.name).c_str());
    return st;
  }
  RETURN_IF_ERROR(StartWorker(spec, {}));
  ROTA_LOG(INFO) << "ssh node " << spec.name << " declared: " << spec.url << ", host key "
                 << ToJson(spec).value("host_key_fingerprint", "") << " (" << spec.host_key_source
                 << ")";
  return spec;
}

void SshNodes::Pin(const std::string& name, std::optional<ssh::HostKeyPin> pin, Done done) {
  if (!Has(name)) return done(Status::NotFound("no ssh node named '" + name + "'"));
  Status queued =
      pool_->Submit([this, name, pin = std::move(pin), done] { done(PinScanned(name, pin)); });
  if (!queued.ok()) done(queued);
}

}  // namespace rota::server
