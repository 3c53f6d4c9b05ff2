#pragma once
// Binds reservation enforcement to the live server:
//  - effective settings: server defaults, then the policy in force, then the
//    reservation owner's overrides within that policy's owner limits;
//  - EnforcementHooks over the reservation store, accounts, the agent gateway
//    and the mail notifier;
//  - EnforcementRunner: feeds live samples and node losses to the
//    EnforcementService on a thread of its own, so ingest never waits for it.
// See docs/design-enforce.md.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/codec.h"
#include "common/mutex.h"
#include "common/status.h"
#include "enforce/types.h"
#include "reserve/policy.h"
#include "server/nodes/cluster_state.h"
#include "server/config.h"
#include "server/enforcement/enforcement_service.h"

namespace rota::notify {
class Notifier;
struct Email;
}

namespace rota::server {

class Accounts;
class AgentGateway;
class Reservations;
struct IdleNotice;

// A policy's `enforcement` section: settings and what owners may change.
struct PolicyEnforcement {
  enforce::EnforcementSettings settings;
  enforce::OwnerLimits owner_limits;
};

// Parses a policy's `enforcement` object: any key of ParseEnforcementSettings
// plus an optional "owner_limits" object (ParseOwnerLimits). Absent settings
// keep `defaults`. InvalidArgument naming the field ("enforcement.mode: ...").
Result<PolicyEnforcement> ParsePolicyEnforcement(const api::Json& j,
                                                 const enforce::EnforcementSettings& defaults);

// The server-wide defaults (config keys enforcement_mode, grace_*, exempt_*,
// enforcement_min_uid).
// InvalidArgument when the configuration is inconsistent.
Result<enforce::EnforcementSettings> DefaultEnforcementSettings(const ServerConfig& config);

// Who owns the GPUs being judged.
struct EnforcementOwner {
  std::string username;
  std::vector<std::string> groups;
  bool admin = false;  // admins are not bound by owner limits
};

// The settings in effect on `gpus` of `node` for a reservation of `owner` with
// `overrides`: the lowest-id policy that has an enforcement section, targets
// one of the GPUs and covers the owner (else `defaults`), changed by the
// overrides within its owner limits. PermissionDenied naming the limit and the
// policy; InvalidArgument for malformed overrides or policy sections.
Result<enforce::EnforcementSettings> EnforcementSettingsFor(
    const std::vector<reserve::Policy>& policies, const EnforcementOwner& owner,
    const std::string& node, const std::vector<reserve::NodeGpu>& gpus,
    const api::Json& overrides, const enforce::EnforcementSettings& defaults);

// What the hooks and the idle mail need. All pointers borrowed; `notifier`
// may be null (mail disabled).
struct EnforcementDeps {
  Reservations* reservations = nullptr;
  Accounts* accounts = nullptr;
  AgentGateway* gateway = nullptr;
  ClusterState* cluster = nullptr;
  notify::Notifier* notifier = nullptr;
  enforce::EnforcementSettings defaults;
  std::string server_url;  // for links in mails
};

// EnforcementHooks::send_email over `notifier` (borrowed, non-null): renders
// the violation mail and reports its delivery.
std::function<void(EmailRequest, std::function<void(EmailDelivery)>)> MakeMailHook(
    notify::Notifier* notifier, const std::string& server_url);

// Hooks for EnforcementService bound to the live server.
EnforcementHooks MakeEnforcementHooks(const EnforcementDeps& deps);

// The mail to the owner about idle reservation `n` (recipients not set): the
// average utilisation while idle, and that it was released when it was.
notify::Email IdleEmail(const IdleNotice& n, const std::string& server_url);

// Reservations::IdleHook that mails the owner (when it has an address).
std::function<void(const IdleNotice&)> MakeIdleMailer(const EnforcementDeps& deps);

// The check Reservations runs on owner overrides (Reservations::EnforcementCheck).
std::function<Status(const reserve::Requester&, const std::string&,
                     const std::vector<reserve::NodeGpu>&, const api::Json&,
                     const std::vector<reserve::Policy>&)>
MakeEnforcementCheck(const enforce::EnforcementSettings& defaults);

// Feeds `service` with every node's newest sample and with node losses, on its
// own thread. Samples that arrive while one is judged replace each other (the
// newest per node wins). Thread-safe; the destructor stops listening and joins.
class EnforcementRunner {
 public:
  // Both borrowed; they must outlive the runner.
  EnforcementRunner(EnforcementService* service, ClusterState* cluster);
  ~EnforcementRunner();
  EnforcementRunner(const EnforcementRunner&) = delete;
  EnforcementRunner& operator=(const EnforcementRunner&) = delete;

  // Waits until every sample queued so far has been judged (tests), up to
  // `timeout_ms`. True when idle.
  bool Drain(int64_t timeout_ms);

 private:
  void Run();

  EnforcementService* const service_;
  ClusterState* const cluster_;
  int listener_ = 0;

  Mutex mu_;
  CondVar cv_;
  std::map<std::string, std::shared_ptr<const api::NodeSample>> pending_ ROTA_GUARDED_BY(mu_);
  std::set<std::string> lost_ ROTA_GUARDED_BY(mu_);
  bool busy_ ROTA_GUARDED_BY(mu_) = false;
  bool stopping_ ROTA_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace rota::server
