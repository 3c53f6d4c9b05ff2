#include "server/leadership/role.h"

namespace rota::server::leadership {

std::unique_ptr<Role> Role::Single(std::string id, std::string version) {
  std::unique_ptr<Role> r(new Role(std::move(id), std::move(version), false, LeaseTiming{}));
  MutexLock lock(&r->mu_);
  r->leader_ = true;
  return r;
}

std::unique_ptr<Role> Role::Replicated(std::string id, std::string version, LeaseTiming timing) {
  return std::unique_ptr<Role>(new Role(std::move(id), std::move(version), true, timing));
}

bool Role::is_leader() const {
  MutexLock lock(&mu_);
  return leader_;
}

int64_t Role::epoch() const {
  MutexLock lock(&mu_);
  return epoch_;
}

std::string Role::leader_address() const {
  MutexLock lock(&mu_);
  return leader_address_;
}

Status Role::CheckLeader(int64_t now_mono_ms) const {
  MutexLock lock(&mu_);
  if (leader_ && (!replicated_ || !MustStepDown(renewal_sent_ms_, now_mono_ms, timing_))) {
    return Status::Ok();
  }
  if (leader_) {
    return Status::Unavailable("this server's leader lease (epoch " + std::to_string(epoch_) +
                               ") ran out: it does no leader work");
  }
  return Status::Unavailable("this server is a follower" +
                             (leader_address_.empty() ? std::string(" and no leader is known yet")
                                                      : "; the leader is " + leader_address_));
}

void Role::SetFollowing(std::string leader_address, int64_t epoch) {
  MutexLock lock(&mu_);
  leader_ = false;
  leader_address_ = std::move(leader_address);
  epoch_ = epoch;
}

void Role::SetLeader(std::string self_address, int64_t epoch, int64_t renewal_sent_mono_ms) {
  MutexLock lock(&mu_);
  leader_ = true;
  leader_address_ = std::move(self_address);
  epoch_ = epoch;
  renewal_sent_ms_ = renewal_sent_mono_ms;
}

void Role::Renewed(int64_t renewal_sent_mono_ms) {
  MutexLock lock(&mu_);
  renewal_sent_ms_ = renewal_sent_mono_ms;
}

void Role::SetServers(std::vector<ServerView> servers) {
  MutexLock lock(&mu_);
  servers_ = std::move(servers);
}

std::vector<ServerView> Role::Servers() const {
  MutexLock lock(&mu_);
  if (!replicated_ && servers_.empty()) {
    return {ServerView{.id = id_, .address = leader_address_, .version = version_, .leader = true}};
  }
  return servers_;
}

}  // namespace rota::server::leadership
